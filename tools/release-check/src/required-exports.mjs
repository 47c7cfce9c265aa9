// What every table package re-exports from @gpuhash/core, so that installing one table package is
// enough: getting a GPU, device arrays, every error class, the op codes, the dictionary's types.
// The unit test checks the tables' sources against it; the release check, the published packages.

/** Values besides the error classes, which are found in core itself (every GpuhashError subclass). */
const VALUES = ['requestGpu', 'fromDevice', 'Gpu', 'DeviceArray', 'Op'];

/** Types (checked by tsc in the release check's consumer program). */
export const REQUIRED_TYPES = [
  'ApplyBatch',
  'ApplyResult',
  'DeviceApplyBatch',
  'DeviceApplyResult',
  'DeviceFindResult',
  'Dictionary',
  'DictionaryOptions',
  'DictionaryStats',
  'ElementType',
  'FindResult',
  'GpuhashErrorCode',
  'HostArrayOf',
  'InsertResult',
  'KeysInput',
  'KeyType',
  'OpCode',
  'RequestGpuOptions',
  'RetrieveResult',
  'ValuesInput',
];

/** @returns {string[]} every export of core that is GpuhashError or a subclass of it, sorted */
export function errorClasses(core) {
  return Object.keys(core)
    .filter((name) => {
      const value = core[name];
      return typeof value === 'function' && (value === core.GpuhashError || value.prototype instanceof core.GpuhashError);
    })
    .sort();
}

/** @returns {string[]} the values a table package must re-export from core */
export function requiredValues(core) {
  return [...VALUES, ...errorClasses(core)];
}
