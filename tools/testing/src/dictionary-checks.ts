import {
  type ApplyBatch,
  type ApplyResult,
  DestroyedError,
  type DeviceApplyBatch,
  type DeviceApplyResult,
  type DeviceArray,
  type DeviceFindResult,
  DeviceLostError,
  type Dictionary,
  type DictionaryCapability,
  DictionaryTable,
  type Gpu,
  GpuhashError,
  type GpuhashErrorCode,
  GpuOutOfMemoryError,
  type HostKeys,
  InvalidArgumentError,
  InvalidOpError,
  type KeyType,
  Op,
  ReservedKeyError,
  requestGpu,
  TableBusyError,
} from '@gpuhash/core';
import fc from 'fast-check';
import { type CheckContext, type CheckSuite, defineChecks, type GpuCheck } from './checks';
import { check } from './keys';
import { createOutOfMemory } from './out-of-memory';
import type { Rng } from './rng';

/**
 * The conformance suite every dictionary table runs (cuCollections' generic tests over every map
 * type): one factory per table (and key type), one suite of checks against the `Dictionary`
 * contract and a CPU model, each check a named behaviour. Random sequences are fast-check
 * properties seeded from the check's rng, so a failure shrinks to a small reproducible case.
 */

/** What the suite can ask a table for beyond the core operations ('growth': it resizes itself when asked to). */
export type ConformanceCapability = DictionaryCapability | 'growth';

export interface ConformanceOptions {
  capacity: number;
  growth?: boolean;
  maxLoadFactor?: number;
}

export interface DictionaryFactory<K extends KeyType = KeyType> {
  /** Names the suite: 'linear-probe', 'hive', 'linear-probe u64'. */
  name: string;
  keyType: K;
  /** The u32 key values the table refuses (none for u64 tables). */
  reservedKeys: readonly number[];
  capabilities: ReadonlySet<ConformanceCapability>;
  /**
   * Creates a table. The options are passed on as given (the argument checks hand it malformed
   * ones: null, unknown names, wrong types); the factory adds only its own fixed settings, such as
   * keyType, to an options object.
   */
  create(gpu: Gpu, options: ConformanceOptions): Promise<Dictionary<K>>;
  /**
   * n distinct keys that collide in this design at `capacity` (same home slot or bucket); u64
   * tables give (low, high) word pairs.
   */
  collidingKeys?(capacity: number, n: number, rng: Rng): Uint32Array;
}

// ---- keys ------------------------------------------------------------------------------------

type Key = number | bigint;

/** How the suite makes, passes and reads back keys of one key type. */
interface KeyCodec<K extends KeyType> {
  /** n distinct keys, none reserved. */
  distinct(rng: Rng, n: number): Key[];
  host(keys: readonly Key[]): HostKeys<K>;
  /** The u32 words a device batch holds (u64: low, high). */
  words(keys: readonly Key[]): Uint32Array;
  /** Keys of a retrieveAll result. */
  list(keys: Uint32Array | BigUint64Array): Key[];
}

function codecFor<K extends KeyType>(factory: DictionaryFactory<K>): KeyCodec<K> {
  if (factory.keyType === 'u32') {
    return {
      distinct: (rng, n) => Array.from(rng.distinctU32(n, factory.reservedKeys)),
      host: (keys) => Uint32Array.from(keys as number[]) as HostKeys<K>,
      words: (keys) => Uint32Array.from(keys as number[]),
      list: (keys) => Array.from(keys as Uint32Array),
    };
  }
  return {
    distinct(rng, n) {
      const seen = new Set<bigint>();
      while (seen.size < n) seen.add((BigInt(rng.u32()) << 32n) | BigInt(rng.u32()));
      return [...seen];
    },
    host: (keys) => BigUint64Array.from(keys as bigint[]) as HostKeys<K>,
    words(keys) {
      const w = new Uint32Array(2 * keys.length);
      keys.forEach((k, i) => {
        w[2 * i] = Number(BigInt(k) & 0xffffffffn);
        w[2 * i + 1] = Number(BigInt(k) >> 32n);
      });
      return w;
    },
    list: (keys) => Array.from(keys as BigUint64Array),
  };
}

const hex = (k: Key | undefined): string => (k === undefined ? 'undefined' : `0x${k.toString(16)}`);

// ---- the model -------------------------------------------------------------------------------

/**
 * The CPU reference: a Map plus, per key, the values a batch with duplicates left possible (the
 * first read of the key adopts the table's choice once it is one of them).
 */
class Model {
  readonly map = new Map<Key, number>();
  readonly open = new Map<Key, Set<number>>();

  get size(): number {
    return this.map.size;
  }

  clone(): Model {
    const m = new Model();
    for (const [k, v] of this.map) m.map.set(k, v);
    for (const [k, s] of this.open) m.open.set(k, new Set(s));
    return m;
  }

  /** Applies the placed pairs of an insert batch; returns how many keys were new. */
  insert(keys: readonly Key[], values: ArrayLike<number>, assign: boolean, placed: (i: number) => boolean = () => true): number {
    const batch = new Map<Key, number[]>();
    keys.forEach((k, i) => {
      if (!placed(i)) return;
      const list = batch.get(k) ?? [];
      list.push(values[i] as number);
      batch.set(k, list);
    });
    let added = 0;
    for (const [k, list] of batch) {
      const had = this.map.has(k);
      if (!had) added++;
      if (had && !assign) continue;
      this.map.set(k, list[0] as number);
      if (new Set(list).size > 1) this.open.set(k, new Set(list));
      else this.open.delete(k);
    }
    return added;
  }

  erase(keys: readonly Key[]): number {
    let n = 0;
    for (const k of keys) {
      this.open.delete(k);
      if (this.map.delete(k)) n++;
    }
    return n;
  }

  clear(): void {
    this.map.clear();
    this.open.clear();
  }

  /** Throws unless `v` is a value the key may hold; adopts it. */
  expectValue(k: Key, v: number, what: string): void {
    const options = this.open.get(k);
    if (options) {
      check(options.has(v), `${what}: key ${hex(k)} holds ${v}, but the batch that stored it gave one of ${[...options].join(', ')}`);
      this.open.delete(k);
      this.map.set(k, v);
      return;
    }
    check(v === this.map.get(k), `${what}: key ${hex(k)} holds ${v}, the model says ${this.map.get(k)}`);
  }

  /** Checks a find's result for `keys`. */
  expectFind(keys: readonly Key[], found: ArrayLike<number>, values: ArrayLike<number>, what: string): void {
    keys.forEach((k, i) => {
      const want = this.map.has(k);
      check(
        (found[i] === 1) === want,
        `${what}: key ${hex(k)} at index ${i}: found=${found[i]} but the model ${want ? `has it (value ${this.map.get(k)})` : 'lacks it'}`,
      );
      if (want) this.expectValue(k, values[i] as number, `${what} index ${i}`);
      else check(values[i] === 0, `${what}: key ${hex(k)} at index ${i} is absent but its value is ${values[i]}, not 0`);
    });
  }

  /** Checks a retrieveAll result. */
  expectExport(keys: readonly Key[], values: ArrayLike<number>, what: string): void {
    check(keys.length === values.length, `${what}: retrieveAll gave ${keys.length} keys but ${values.length} values`);
    const seen = new Set<Key>();
    keys.forEach((k, i) => {
      check(!seen.has(k), `${what}: retrieveAll gave key ${hex(k)} twice`);
      seen.add(k);
      check(this.map.has(k), `${what}: retrieveAll gave key ${hex(k)} (value ${values[i]}), which the model lacks`);
      this.expectValue(k, values[i] as number, what);
    });
    if (keys.length !== this.size) {
      const missing = [...this.map.keys()].filter((k) => !seen.has(k));
      throw new Error(
        `${what}: retrieveAll gave ${keys.length} pairs, the model has ${this.size}; missing ${missing.slice(0, 5).map(hex).join(', ')}`,
      );
    }
  }
}

// ---- errors ----------------------------------------------------------------------------------

/** The documented name and code of each error class (names are written out: minifiers rename classes). */
const ERRORS = {
  ReservedKeyError: { cls: ReservedKeyError, code: 'RESERVED_KEY' },
  InvalidArgumentError: { cls: InvalidArgumentError, code: 'INVALID_ARGUMENT' },
  InvalidOpError: { cls: InvalidOpError, code: 'INVALID_OP' },
  DestroyedError: { cls: DestroyedError, code: 'DESTROYED' },
  TableBusyError: { cls: TableBusyError, code: 'TABLE_BUSY' },
  DeviceLostError: { cls: DeviceLostError, code: 'DEVICE_LOST' },
  GpuOutOfMemoryError: { cls: GpuOutOfMemoryError, code: 'OUT_OF_MEMORY' },
} as const satisfies Record<string, { cls: abstract new (...args: never[]) => GpuhashError; code: GpuhashErrorCode }>;
type ErrorName = keyof typeof ERRORS;

function describeError(e: unknown): string {
  if (e === undefined) return 'nothing';
  if (e instanceof Error) {
    const code = (e as { code?: unknown }).code;
    return `${e.name}${code !== undefined ? ` (code ${String(code)})` : ''}: ${e.message.slice(0, 300)}`;
  }
  return `a non-Error ${String(e)}`;
}

/** Runs `call`; returns what it threw (synchronously or by rejecting), undefined if nothing. */
async function caught(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** Throws unless `e` is the named gpuhash error: its class, its documented `name` and `code`, a GpuhashError. */
function expectError<N extends ErrorName>(e: unknown, name: N, what: string): InstanceType<(typeof ERRORS)[N]['cls']> {
  const { cls, code } = ERRORS[name];
  check(e !== undefined, `${what}: nothing was thrown, expected ${name}`);
  check(e instanceof cls, `${what}: threw ${describeError(e)}; expected ${name}`);
  check(e instanceof GpuhashError, `${what}: ${name} is not a GpuhashError`);
  const err = e as GpuhashError;
  check(err.code === code, `${what}: ${name} has code ${String(err.code)}, expected '${code}'`);
  check(err.name === name, `${what}: the error's name is '${err.name}', expected '${name}'`);
  return e as InstanceType<(typeof ERRORS)[N]['cls']>;
}

// ---- table helpers ---------------------------------------------------------------------------

/** Host keys' values and found flags, whatever the table returned. */
async function findHost<K extends KeyType>(table: Dictionary<K>, keys: HostKeys<K>): Promise<{ values: Uint32Array; found: Uint8Array }> {
  return table.find(keys);
}

/** Marks the entries of `out` arrays past the batch: a find must leave them as they were. */
const OUT_SENTINEL = 0xdeadbeef;
const OUT_SPARE = 3;

/**
 * A host find into caller-owned arrays longer than the batch (find's `out` option): the answers
 * come back as views of those arrays, and the entries past the batch are left alone.
 */
async function findInto<K extends KeyType>(
  table: Dictionary<K>,
  keys: HostKeys<K>,
  n: number,
): Promise<{ values: Uint32Array; found: Uint8Array }> {
  const out = { values: new Uint32Array(n + OUT_SPARE).fill(OUT_SENTINEL), found: new Uint8Array(n + OUT_SPARE).fill(0xee) };
  const r = await table.find(keys, { out });
  check(
    r.values.buffer === out.values.buffer && r.found.buffer === out.found.buffer,
    'find with out: the answers are not views of the out arrays',
  );
  check(r.values.length === n && r.found.length === n, `find with out: ${r.values.length} and ${r.found.length} answers for ${n} keys`);
  for (let i = n; i < n + OUT_SPARE; i++)
    check(out.values[i] === OUT_SENTINEL && out.found[i] === 0xee, `find with out: entry ${i}, past the batch of ${n}, was overwritten`);
  return r;
}

/** A host mixed batch (tables with 'apply'). */
function hostApply<K extends KeyType>(table: Dictionary<K>, batch: ApplyBatch<K>): Promise<ApplyResult> {
  const apply = table.apply as ((b: ApplyBatch<K>) => Promise<ApplyResult>) | undefined;
  if (apply === undefined) throw new Error('the table has no apply()');
  return apply.call(table, batch);
}

/** A device mixed batch (tables with 'device-apply'). */
function deviceApply<K extends KeyType>(table: Dictionary<K>, batch: DeviceApplyBatch): Promise<DeviceApplyResult> {
  const apply = table.apply as ((b: DeviceApplyBatch) => Promise<DeviceApplyResult>) | undefined;
  if (apply === undefined) throw new Error('the table has no apply()');
  return apply.call(table, batch);
}

/** Throws unless the table holds exactly the model's pairs (retrieveAll) and its size is the model's. */
async function expectContents<K extends KeyType>(table: Dictionary<K>, codec: KeyCodec<K>, model: Model, what: string): Promise<void> {
  let all: Awaited<ReturnType<Dictionary<K>['retrieveAll']>>;
  try {
    all = await table.retrieveAll();
  } catch (e) {
    throw new Error(`${what}: retrieveAll threw ${describeError(e)}`);
  }
  model.expectExport(codec.list(all.keys), all.values, what);
  check(table.size === model.size, `${what}: table.size is ${table.size}, the model has ${model.size}`);
}

/** Inserts distinct keys from the host and records them in the model; checks the result. */
async function fill<K extends KeyType>(
  table: Dictionary<K>,
  codec: KeyCodec<K>,
  model: Model,
  keys: readonly Key[],
  values: Uint32Array,
  what: string,
): Promise<void> {
  const r = await table.insert(codec.host(keys), values);
  check(r.failed.length === 0, `${what}: insert of ${keys.length} keys reported ${r.failed.length} failed`);
  const added = model.insert(keys, values, false);
  check(r.inserted === added, `${what}: insert reported ${r.inserted} inserted, the model added ${added}`);
}

function valuesFor(rng: Rng, n: number): Uint32Array {
  return rng.u32Array(n);
}

/** Uploads u32 words as a device array. */
function upload(gpu: Gpu, words: Uint32Array): DeviceArray<'u32'> {
  return gpu.upload(words) as DeviceArray<'u32'>;
}

/** Runs `body` with a table, destroying it afterwards. */
async function withTable<K extends KeyType, T>(
  factory: DictionaryFactory<K>,
  gpu: Gpu,
  options: ConformanceOptions,
  body: (table: Dictionary<K>) => Promise<T>,
): Promise<T> {
  const table = await factory.create(gpu, options);
  try {
    return await body(table);
  } finally {
    table.destroy();
  }
}

/** Submits encoded passes inside a validation scope: a WebGPU validation error fails the check. */
async function submitChecked(gpu: Gpu, what: string, encode: (encoder: GPUCommandEncoder) => void): Promise<void> {
  gpu.device.pushErrorScope('validation');
  let thrownByEncode: unknown;
  try {
    const encoder = gpu.device.createCommandEncoder();
    encode(encoder);
    gpu.submit([encoder.finish()]);
  } catch (e) {
    thrownByEncode = e;
  }
  const error = await gpu.device.popErrorScope();
  if (thrownByEncode !== undefined) throw thrownByEncode;
  check(error === null, `${what}: WebGPU validation failed: ${error?.message}`);
  await gpu.finish();
}

// ---- random sequences --------------------------------------------------------------------------

type Command =
  | { op: 'insert' | 'insertOrAssign'; keys: number[]; values: number[] }
  | { op: 'find'; keys: number[]; out: boolean }
  | { op: 'erase'; keys: number[] }
  | { op: 'apply'; keys: number[]; ops: number[]; values: number[] }
  | { op: 'clear' | 'retrieveAll' };

const u32Value = fc.integer({ min: 0, max: 0xffffffff });

function commandArbitrary(pool: number, maxBatch: number, withApply: boolean): fc.Arbitrary<Command> {
  const index = fc.nat({ max: pool - 1 });
  const pairs = fc.array(fc.tuple(index, u32Value), { minLength: 1, maxLength: maxBatch, size: 'max' });
  const keys = fc.array(index, { minLength: 1, maxLength: maxBatch, size: 'max' });
  const arbs: fc.WeightedArbitrary<Command>[] = [
    { weight: 4, arbitrary: pairs.map((p) => ({ op: 'insert' as const, keys: p.map((x) => x[0]), values: p.map((x) => x[1]) })) },
    { weight: 3, arbitrary: pairs.map((p) => ({ op: 'insertOrAssign' as const, keys: p.map((x) => x[0]), values: p.map((x) => x[1]) })) },
    { weight: 3, arbitrary: fc.tuple(keys, fc.boolean()).map(([k, out]) => ({ op: 'find' as const, keys: k, out })) },
    { weight: 3, arbitrary: keys.map((k) => ({ op: 'erase' as const, keys: k })) },
    { weight: 1, arbitrary: fc.constant({ op: 'clear' as const }) },
    { weight: 1, arbitrary: fc.constant({ op: 'retrieveAll' as const }) },
  ];
  if (withApply) {
    // Distinct keys: a mixed batch over distinct keys has the sequential outcome.
    const entries = fc.uniqueArray(fc.tuple(index, fc.integer({ min: 0, max: 3 }), u32Value), {
      selector: (t) => t[0],
      minLength: 1,
      maxLength: maxBatch,
      size: 'max',
    });
    arbs.push({
      weight: 3,
      arbitrary: entries.map((e) => ({
        op: 'apply' as const,
        keys: e.map((t) => t[0]),
        ops: e.map((t) => t[1]),
        values: e.map((t) => t[2]),
      })),
    });
  }
  return fc.oneof(...arbs);
}

/** Checks one command's result against the model and applies it there. `growth`: nothing may fail. */
async function checkCommand<K extends KeyType>(
  table: Dictionary<K>,
  codec: KeyCodec<K>,
  model: Model,
  pool: readonly Key[],
  cmd: Command,
  result: unknown,
  growth: boolean,
  what: string,
): Promise<void> {
  switch (cmd.op) {
    case 'insert':
    case 'insertOrAssign': {
      const r = result as { inserted: number; failed: Uint32Array };
      const keys = cmd.keys.map((i) => pool[i] as Key);
      if (growth) check(r.failed.length === 0, `${what}: ${r.failed.length} pairs failed with growth on (first index ${r.failed[0]})`);
      const failed = new Set(r.failed);
      for (const i of failed) check(i < keys.length, `${what}: failed names index ${i} of a batch of ${keys.length}`);
      const before = model.clone();
      const added = model.insert(keys, cmd.values, cmd.op === 'insertOrAssign', (i) => !failed.has(i));
      check(r.inserted === added, `${what}: inserted ${r.inserted}, the model added ${added} (failed ${failed.size})`);
      if (failed.size > 0) {
        // Whatever failed names is absent (unless an earlier batch stored it, or another copy in this batch was placed).
        const f = await findHost(table, codec.host(keys));
        for (const i of failed) {
          const k = keys[i] as Key;
          const present = model.map.has(k);
          check(
            (f.found[i] === 1) === present,
            `${what}: failed names index ${i} (key ${hex(k)}), which the table ${f.found[i] === 1 ? 'holds' : 'lacks'}; ${
              present ? (before.map.has(k) ? 'it was there before' : 'another copy of it was placed') : 'it was new'
            }`,
          );
        }
      }
      break;
    }
    case 'find': {
      const r = result as { values: Uint32Array; found: Uint8Array };
      model.expectFind(
        cmd.keys.map((i) => pool[i] as Key),
        r.found,
        r.values,
        what,
      );
      break;
    }
    case 'erase': {
      const want = model.erase(cmd.keys.map((i) => pool[i] as Key));
      check(result === want, `${what}: erase returned ${String(result)}, the model erased ${want}`);
      break;
    }
    case 'apply': {
      const r = result as { values: Uint32Array; status: Uint8Array; failed: Uint32Array };
      if (growth) check(r.failed.length === 0, `${what}: ${r.failed.length} ops failed with growth on (first index ${r.failed[0]})`);
      const failed = new Set(r.failed);
      cmd.keys.forEach((ki, i) => {
        const k = pool[ki] as Key;
        const op = cmd.ops[i] as number;
        const had = model.map.has(k);
        const at = `${what}: op ${i} (code ${op}, key ${hex(k)})`;
        const status = r.status[i];
        if (op === Op.find) {
          check(status === (had ? 1 : 0), `${at}: find status ${status}, the model ${had ? 'has' : 'lacks'} the key`);
          if (had) model.expectValue(k, r.values[i] as number, at);
          else check(r.values[i] === 0, `${at}: find of an absent key gave value ${r.values[i]}, not 0`);
        } else if (op === Op.erase) {
          check(status === (had ? 1 : 0), `${at}: erase status ${status}, the model ${had ? 'has' : 'lacks'} the key`);
          model.erase([k]);
        } else if (failed.has(i)) {
          check(!had && status === 0, `${at}: failed, but ${had ? 'the key was present' : `status is ${status}`}`);
        } else {
          check(status === (had ? 0 : 1), `${at}: insert status ${status}, the model ${had ? 'has' : 'lacks'} the key`);
          model.insert([k], [cmd.values[i] as number], op === Op.insertOrAssign);
        }
      });
      break;
    }
    case 'clear':
      model.clear();
      break;
    case 'retrieveAll': {
      const r = result as { keys: Uint32Array | BigUint64Array; values: Uint32Array };
      model.expectExport(codec.list(r.keys), r.values, what);
      break;
    }
  }
}

/** Issues one command (no await). */
function issue<K extends KeyType>(table: Dictionary<K>, codec: KeyCodec<K>, pool: readonly Key[], cmd: Command): Promise<unknown> {
  switch (cmd.op) {
    case 'insert':
    case 'insertOrAssign':
      return table[cmd.op](codec.host(cmd.keys.map((i) => pool[i] as Key)), Uint32Array.from(cmd.values));
    case 'find':
      return cmd.out
        ? findInto(table, codec.host(cmd.keys.map((i) => pool[i] as Key)), cmd.keys.length)
        : findHost(table, codec.host(cmd.keys.map((i) => pool[i] as Key)));
    case 'erase':
      return table.erase(codec.host(cmd.keys.map((i) => pool[i] as Key)));
    case 'apply': {
      return hostApply(table, {
        ops: Uint8Array.from(cmd.ops),
        keys: codec.host(cmd.keys.map((i) => pool[i] as Key)),
        values: Uint32Array.from(cmd.values),
      });
    }
    case 'clear':
      return table.clear();
    case 'retrieveAll':
      return table.retrieveAll();
  }
}

function describeCommand(cmd: Command): string {
  return 'keys' in cmd ? `${cmd.op} of ${cmd.keys.length}` : cmd.op;
}

interface SequenceSetup {
  pool: number;
  maxBatch: number;
  maxCommands: number;
  runs: number;
  capacity: number;
  growth: boolean;
  /** Issue every command before awaiting any (host operations must complete in call order). */
  unawaited?: boolean;
}

async function sequenceProperty<K extends KeyType>(factory: DictionaryFactory<K>, ctx: CheckContext, s: SequenceSetup): Promise<void> {
  const codec = codecFor(factory);
  const pool = codec.distinct(ctx.rng, s.pool);
  const withApply = factory.capabilities.has('apply');
  const commands = fc.array(commandArbitrary(s.pool, s.maxBatch, withApply), { minLength: 1, maxLength: s.maxCommands, size: 'max' });
  // What the runs exercised: the check fails if its sizes never fill a fixed table or grow a growing one.
  const seen = { failures: 0, grown: 0 };
  const property = fc.asyncProperty(commands, async (cmds) => {
    await withTable(factory, ctx.gpu, { capacity: s.capacity, growth: s.growth, maxLoadFactor: 0.8 }, async (table) => {
      const model = new Model();
      const initialCapacity = table.capacity;
      const tally = (result: unknown) => {
        const failed = (result as { failed?: unknown } | undefined)?.failed;
        if (failed instanceof Uint32Array) seen.failures += failed.length;
      };
      if (s.unawaited) {
        const pending = cmds.map((cmd) => issue(table, codec, pool, cmd));
        for (const p of pending) p.catch(() => {});
        for (const [i, cmd] of cmds.entries()) {
          const what = `command ${i} (${describeCommand(cmd)}, issued without awaiting)`;
          let result: unknown;
          try {
            result = await pending[i];
          } catch (e) {
            throw new Error(`${what}: threw ${describeError(e)}`);
          }
          tally(result);
          await checkCommand(table, codec, model, pool, cmd, result, s.growth, what);
        }
      } else {
        for (const [i, cmd] of cmds.entries()) {
          const what = `command ${i} (${describeCommand(cmd)})`;
          let result: unknown;
          try {
            result = await issue(table, codec, pool, cmd);
          } catch (e) {
            throw new Error(`${what}: threw ${describeError(e)}`);
          }
          tally(result);
          await checkCommand(table, codec, model, pool, cmd, result, s.growth, what);
          check(table.size === model.size, `${what}: table.size is ${table.size}, the model has ${model.size}`);
        }
      }
      const all = codec.host(pool);
      const f = await findHost(table, all);
      model.expectFind(pool, f.found, f.values, 'final find of every key');
      await expectContents(table, codec, model, 'final retrieveAll');
      if (table.capacity > initialCapacity) seen.grown++;
      if (!s.growth)
        check(table.capacity === initialCapacity, `growth off: the capacity moved from ${initialCapacity} to ${table.capacity}`);
    });
  });
  await assertProperty(property, ctx, s.runs);
  if (!s.growth)
    check(seen.failures > 0, `no insert of the ${s.runs} runs filled the table of ${s.capacity}: the check's sizes are too small`);
  else if (!s.unawaited)
    check(seen.grown > 0, `none of the ${s.runs} runs grew the table from ${s.capacity}: the check's sizes are too small`);
}

// ---- the suite -------------------------------------------------------------------------------

/** fast-check runs: a few under SwiftShader, more on a GPU host. */
function runs(base: number, scale: number): number {
  return Math.max(1, Math.round(base * Math.sqrt(scale)));
}

/**
 * Runs a property seeded from the check's rng (the failure report gives the seed and path that
 * replay it). A failure shrinks for up to 60 s (times the scale), then reports the smallest case
 * found so far; that bound replaces `endOnFailure`, which would report the first case unshrunk.
 * The bound also covers the first run, which compiles the table's pipelines: fast-check fails a
 * property interrupted before one run ends, and on a CPU shared with other suites a first run
 * took over 20 s.
 */
async function assertProperty<Ts>(
  property: fc.IAsyncProperty<Ts>,
  ctx: Pick<CheckContext, 'rng' | 'scale'>,
  numRuns: number,
): Promise<void> {
  await fc.assert(property, { seed: ctx.rng.u32() | 0, numRuns, interruptAfterTimeLimit: 60_000 * ctx.scale });
}

/** Collects the failures of independent cases, so one run lists every case that fails. */
class Cases {
  private readonly problems: string[] = [];
  private count = 0;

  async run(what: string, body: () => Promise<void> | void): Promise<void> {
    this.count++;
    try {
      await body();
    } catch (e) {
      this.problems.push(e instanceof Error ? e.message : `${what}: ${String(e)}`);
    }
  }

  /** Throws listing every failed case. */
  finish(what: string): void {
    if (this.problems.length === 0) return;
    throw new Error(`${what}: ${this.problems.length} of ${this.count} cases failed:\n  ${this.problems.join('\n  ')}`);
  }
}

/**
 * The conformance checks for one table: every behaviour of the `Dictionary` contract against the
 * CPU model. Checks that need a capability the factory lacks are not registered.
 */
export function dictionaryChecks<K extends KeyType>(factory: DictionaryFactory<K>): CheckSuite {
  const caps = factory.capabilities;
  const codec = codecFor(factory);
  const hasApply = caps.has('apply');
  const hasDeviceApply = caps.has('device-apply');
  const reserved = factory.reservedKeys;
  const checks: GpuCheck[] = [];
  const add = (name: string, run: (ctx: CheckContext) => Promise<void>, when = true) => {
    if (when) checks.push({ name, run });
  };

  // 1. Random sequences against the model.
  add(
    'random sequences (insert, insertOrAssign, find, erase, apply, clear, retrieveAll) match the model, growth on',
    (ctx) =>
      sequenceProperty(factory, ctx, {
        pool: 160 * ctx.scale,
        maxBatch: 48 * ctx.scale,
        maxCommands: 12,
        runs: runs(20, ctx.scale),
        capacity: 64,
        growth: true,
      }),
    caps.has('growth'),
  );
  add('random sequences match the model, growth off: what failed names is absent, the rest present, sizes equal', (ctx) =>
    sequenceProperty(factory, ctx, {
      pool: 400 * ctx.scale,
      maxBatch: 128 * ctx.scale,
      maxCommands: 10,
      runs: runs(20, ctx.scale),
      capacity: 64 * ctx.scale,
      growth: false,
    }),
  );
  add(
    'duplicate keys in one batch: one of the batch values wins (insert keeps, insertOrAssign overwrites)',
    async ({ gpu, rng, scale }) => {
      await withTable(factory, gpu, { capacity: 1024 * scale }, async (table) => {
        const model = new Model();
        const keys = codec.distinct(rng, 40 * scale);
        for (const [round, assign] of [false, false, true, true].entries()) {
          const batch = Array.from({ length: 300 * scale }, () => keys[rng.below(keys.length)] as Key);
          const values = valuesFor(rng, batch.length);
          const r = assign ? await table.insertOrAssign(codec.host(batch), values) : await table.insert(codec.host(batch), values);
          const what = `round ${round} (${assign ? 'insertOrAssign' : 'insert'} of ${batch.length} over ${keys.length} keys)`;
          check(r.failed.length === 0, `${what}: ${r.failed.length} failed`);
          const added = model.insert(batch, values, assign);
          check(r.inserted === added, `${what}: inserted ${r.inserted}, expected ${added} (duplicates count once)`);
          const f = await findHost(table, codec.host(keys));
          model.expectFind(keys, f.found, f.values, what);
        }
        await expectContents(table, codec, model, 'after the duplicate batches');
      });
    },
  );
  add('empty batches are accepted and change nothing', async ({ gpu, rng }) => {
    await withTable(factory, gpu, { capacity: 256 }, async (table) => {
      const model = new Model();
      await fill(table, codec, model, codec.distinct(rng, 20), valuesFor(rng, 20), 'setup');
      const none = codec.host([]);
      const ops: Array<[string, () => Promise<unknown>]> = [
        ['insert', () => table.insert(none, new Uint32Array(0))],
        ['insertOrAssign', () => table.insertOrAssign(none, new Uint32Array(0))],
        ['find', () => findHost(table, none)],
        ['erase', () => table.erase(none)],
      ];
      if (hasApply) ops.push(['apply', () => hostApply(table, { ops: new Uint8Array(0), keys: none })]);
      for (const [name, call] of ops) {
        const e = await caught(call);
        check(e === undefined, `${name} of an empty batch threw ${describeError(e)}`);
      }
      await expectContents(table, codec, model, 'after the empty batches');
    });
  });

  // 2. Export.
  add('retrieveAll equals the model (empty, after inserts and erases, after clear)', async ({ gpu, rng, scale }) => {
    const property = fc.asyncProperty(
      fc.integer({ min: 0, max: 600 * scale }),
      fc.integer({ min: 0, max: 100 }),
      async (n, erasePercent) => {
        await withTable(factory, gpu, { capacity: 64 }, async (table) => {
          const model = new Model();
          await expectContents(table, codec, model, 'empty table');
          const keys = codec.distinct(rng, n);
          await fill(table, codec, model, keys, valuesFor(rng, n), 'insert');
          const gone = keys.filter(() => rng.below(100) < erasePercent);
          const erased = await table.erase(codec.host(gone));
          check(erased === model.erase(gone), `erase of ${gone.length} returned ${erased}`);
          await expectContents(table, codec, model, `after ${n} inserts and ${gone.length} erases`);
          await table.clear();
          model.clear();
          await expectContents(table, codec, model, 'after clear');
        });
      },
    );
    await assertProperty(property, { rng, scale }, runs(10, scale));
  });

  // 3. Reserved keys.
  const hostOps = (table: Dictionary<K>): Array<[string, (keys: HostKeys<K>, n: number) => Promise<unknown>]> => {
    const ops: Array<[string, (keys: HostKeys<K>, n: number) => Promise<unknown>]> = [
      ['insert', (k, n) => table.insert(k, new Uint32Array(n).fill(7))],
      ['insertOrAssign', (k, n) => table.insertOrAssign(k, new Uint32Array(n).fill(7))],
      ['find', (k) => findHost(table, k)],
      ['erase', (k) => table.erase(k)],
    ];
    if (hasApply) {
      ops.push([
        'apply',
        (k, n) =>
          hostApply(table, {
            ops: Uint8Array.from({ length: n }, (_, i) => i % 4),
            keys: k,
            values: new Uint32Array(n).fill(7),
          }),
      ]);
    }
    return ops;
  };
  add(
    'reserved keys in a host batch: refused whole (ReservedKeyError, applied none, exact indices) by every operation; the table is unchanged',
    async ({ gpu, rng, scale }) => {
      await withTable(factory, gpu, { capacity: 1024 * scale }, async (table) => {
        const model = new Model();
        const present = codec.distinct(rng, 64 * scale);
        await fill(table, codec, model, present, valuesFor(rng, present.length), 'setup');
        const property = fc.asyncProperty(
          // Small batches, and batches past 2^18 keys, whose check runs on the GPU after the upload.
          fc.oneof(
            { weight: 3, arbitrary: fc.integer({ min: 1, max: 40 }) },
            { weight: 1, arbitrary: fc.integer({ min: 2 ** 18, max: 2 ** 18 + 40 }) },
          ),
          fc.array(fc.tuple(fc.nat(), fc.nat({ max: reserved.length - 1 })), { minLength: 1, maxLength: 4 }),
          fc.nat({ max: 4 }),
          async (n, spots, opIndex) => {
            const ops = hostOps(table);
            const [name, call] = ops[opIndex % ops.length] as (typeof ops)[number];
            const keys = Array.from(
              { length: n },
              (_, i) =>
                (i >= 40
                  ? present[i % present.length]
                  : i % 2 === 0
                    ? present[rng.below(present.length)]
                    : codec.distinct(rng, 1)[0]) as Key,
            );
            const at = new Set<number>();
            for (const [pos, r] of spots) {
              keys[pos % n] = reserved[r] as number;
              at.add(pos % n);
            }
            const want = [...at].sort((a, b) => a - b);
            const what = `${name} of ${n} keys with reserved keys at ${want.join(', ')}`;
            const e = expectError(await caught(() => call(codec.host(keys), n)), 'ReservedKeyError', what);
            check(e.applied === 'none', `${what}: applied is '${e.applied}', expected 'none'`);
            check(
              e.indices.length === want.length && want.every((v, i) => e.indices[i] === v),
              `${what}: indices [${[...e.indices].join(', ')}], expected [${want.join(', ')}]`,
            );
            check(e.firstIndex === want[0], `${what}: firstIndex ${e.firstIndex}, expected ${want[0]}`);
            await expectContents(table, codec, model, `after the refused ${what}`);
          },
        );
        await assertProperty(property, { rng, scale }, runs(30, scale));
      });
    },
    reserved.length > 0,
  );
  add(
    'a host find past one chunk (pipelined: uploads, lookups and readbacks overlap) answers like the model, into fresh arrays and into out arrays; a reserved key in it is named',
    async ({ gpu, rng }) => {
      // Small chunks, so a batch of a few thousand keys spans three of them.
      const chunk = 1024;
      const before = DictionaryTable.findChunkKeys;
      DictionaryTable.findChunkKeys = chunk;
      try {
        await largeFind(gpu, rng, chunk);
      } finally {
        DictionaryTable.findChunkKeys = before;
      }
    },
  );
  const largeFind = (gpu: Gpu, rng: Rng, chunk: number) =>
    withTable(factory, gpu, { capacity: 4096 }, async (table) => {
      const model = new Model();
      const present = codec.distinct(rng, 1500);
      await fill(table, codec, model, present, valuesFor(rng, present.length), 'setup');
      // Present keys and fresh ones (absent unless they collide with the present: the model decides).
      const pool = [...present, ...codec.distinct(rng, 1500)];
      const n = 2 * chunk + 1 + rng.below(1000);
      const queries = Array.from({ length: n }, () => pool[rng.below(pool.length)] as Key);
      const hostQueries = codec.host(queries);
      const fresh = await table.find(hostQueries);
      model.expectFind(queries, fresh.found, fresh.values, `a find of ${n} keys`);
      const out = { values: new Uint32Array(n + 2).fill(0xdeadbeef), found: new Uint8Array(n + 2).fill(9) };
      const into = await table.find(hostQueries, { out });
      check(
        into.values.buffer === out.values.buffer && into.found.buffer === out.found.buffer,
        'the answers are not views of the out arrays',
      );
      model.expectFind(queries, into.found, into.values, `a find of ${n} keys into out arrays`);
      check(out.values[n] === 0xdeadbeef && out.found[n + 1] === 9, 'a find wrote past its batch into the out arrays');
      if (reserved.length > 0) {
        const at = [rng.below(chunk), chunk + rng.below(n - chunk)];
        const bad = queries.slice();
        for (const i of at) bad[i] = reserved[rng.below(reserved.length)] as number;
        const what = `a find of ${n} keys with reserved keys at ${at.join(', ')}`;
        const e = expectError(await caught(() => table.find(codec.host(bad))), 'ReservedKeyError', what);
        check(
          e.indices.length === 2 && e.indices[0] === at[0] && e.indices[1] === at[1],
          `${what}: indices [${[...e.indices].join(', ')}]`,
        );
      }
      await expectContents(table, codec, model, 'after the large finds');
    });
  add(
    'reserved keys in a device batch: the other keys are applied, then ReservedKeyError (applied others, exact indices)',
    async ({ gpu, rng, scale }) => {
      await withTable(factory, gpu, { capacity: 1024 * scale }, async (table) => {
        const model = new Model();
        const n = 30 * scale;
        const spots = [7, n - 1, 3];
        const make = () => {
          const keys = codec.distinct(rng, n);
          spots.forEach((s, j) => {
            keys[s] = reserved[j % reserved.length] as number;
          });
          return keys;
        };
        const keep = (_: Key, i: number) => !spots.includes(i);
        const want = [...spots].sort((a, b) => a - b);
        const expectRefused = (e: unknown, what: string) => {
          const err = expectError(e, 'ReservedKeyError', what);
          check(err.applied === 'others', `${what}: applied is '${err.applied}', expected 'others'`);
          check(
            err.indices.length === want.length && want.every((v, i) => err.indices[i] === v),
            `${what}: indices [${[...err.indices].join(', ')}], expected [${want.join(', ')}]`,
          );
        };
        // insert
        const keys = make();
        const values = valuesFor(rng, n);
        const dk = upload(gpu, codec.words(keys));
        const dv = upload(gpu, values);
        try {
          expectRefused(await caught(() => table.insert(dk, dv)), 'device insert');
          model.insert(
            keys.filter(keep),
            values.filter((_, i) => keep(0, i)),
            false,
          );
          await expectContents(table, codec, model, 'after the device insert with reserved keys');
          // erase: the same batch, half of the others
          const half = keys.map((k, i) => (i % 2 === 0 || spots.includes(i) ? k : codec.distinct(rng, 1)[0])) as Key[];
          const de = upload(gpu, codec.words(half));
          try {
            expectRefused(await caught(() => table.erase(de)), 'device erase');
          } finally {
            de.destroy();
          }
          model.erase(half.filter(keep));
          await expectContents(table, codec, model, 'after the device erase with reserved keys');
          if (hasDeviceApply) {
            const ops = upload(
              gpu,
              Uint32Array.from({ length: n }, (_, i) => [Op.insert, Op.find, Op.erase][i % 3] as number),
            );
            const fresh = make();
            const ak = upload(gpu, codec.words(fresh));
            const av = upload(gpu, values);
            try {
              const e = await caught(() => deviceApply(table, { ops, keys: ak, values: av }));
              expectRefused(e, 'device apply');
            } finally {
              for (const a of [ops, ak, av]) a.destroy();
            }
            fresh.forEach((k, i) => {
              if (!keep(k, i)) return;
              if (i % 3 === 0) model.insert([k], [values[i] as number], false);
              else if (i % 3 === 2) model.erase([k]);
            });
            await expectContents(table, codec, model, 'after the device apply with reserved keys');
          }
        } finally {
          dk.destroy();
          dv.destroy();
        }
      });
    },
    reserved.length > 0,
  );
  add(
    'a device-resident find of a reserved key answers not found (the others are found)',
    async ({ gpu, rng }) => {
      await withTable(factory, gpu, { capacity: 256 }, async (table) => {
        const model = new Model();
        const keys = codec.distinct(rng, 20);
        await fill(table, codec, model, keys, valuesFor(rng, 20), 'setup');
        const probe = [...keys, ...reserved];
        const dk = upload(gpu, codec.words(probe));
        let result: DeviceFindResult | undefined;
        try {
          const e = await caught(async () => {
            result = await table.find(dk);
          });
          check(e === undefined, `device find with reserved keys threw ${describeError(e)}`);
          const r = result as DeviceFindResult;
          const found = await gpu.download(r.found);
          const values = await gpu.download(r.values);
          model.expectFind(probe, found, values, 'device find with reserved keys');
        } finally {
          dk.destroy();
          result?.values.destroy();
          result?.found.destroy();
        }
      });
    },
    reserved.length > 0,
  );
  add(
    'u64 keys whose words look like u32 markers are ordinary keys',
    async ({ gpu, rng }) => {
      await withTable(factory, gpu, { capacity: 256 }, async (table) => {
        const model = new Model();
        const words = [0, 1, 0xfffffffd, 0xfffffffe, 0xffffffff];
        const keys: Key[] = [];
        for (const lo of words) for (const hi of words) keys.push((BigInt(hi) << 32n) | BigInt(lo));
        await fill(table, codec, model, keys, valuesFor(rng, keys.length), 'insert');
        const f = await findHost(table, codec.host(keys));
        model.expectFind(keys, f.found, f.values, 'find');
        await expectContents(table, codec, model, 'export');
        const erased = await table.erase(codec.host(keys.slice(0, 10)));
        check(erased === model.erase(keys.slice(0, 10)), `erase returned ${erased}, expected 10`);
        await expectContents(table, codec, model, 'after erase');
      });
    },
    factory.keyType === 'u64' && reserved.length === 0,
  );

  // 4. Wrong argument types.
  add('wrong argument types: InvalidArgumentError, nothing applied', async ({ gpu, rng }) => {
    await withTable(factory, gpu, { capacity: 256 }, async (table) => {
      const model = new Model();
      const present = codec.distinct(rng, 16);
      await fill(table, codec, model, present, valuesFor(rng, 16), 'setup');
      const keys = [...present.slice(0, 4), ...codec.distinct(rng, 4)];
      const hk = codec.host(keys);
      const n = keys.length;
      const badValues: Array<[string, unknown]> = [
        ['Float32Array', new Float32Array(n).fill(1.5)],
        ['Int32Array', new Int32Array(n).fill(-1)],
        ['Float64Array', new Float64Array(n)],
        ['BigUint64Array', new BigUint64Array(n)],
        ['a plain array', Array.from({ length: n }, () => 1)],
        ['null', null],
        ['undefined', undefined],
        ['a shorter Uint32Array', new Uint32Array(n - 1)],
        ['a longer Uint32Array', new Uint32Array(n + 1)],
      ];
      const badKeys: Array<[string, unknown]> = [
        ['Int32Array', Int32Array.from({ length: n }, (_, i) => i + 1)],
        ['Float32Array', Float32Array.from({ length: n }, (_, i) => i + 1)],
        ['a plain array', Array.from({ length: n }, (_, i) => i + 1)],
        ['null', null],
        [
          factory.keyType === 'u64' ? 'a Uint32Array of an odd word count' : 'a BigUint64Array',
          factory.keyType === 'u64' ? new Uint32Array(2 * n - 1) : new BigUint64Array(n),
        ],
      ];
      const cases: Array<[string, () => Promise<unknown>]> = [];
      for (const op of ['insert', 'insertOrAssign'] as const) {
        for (const [what, v] of badValues) cases.push([`${op} with values as ${what}`, () => table[op](hk, v as Uint32Array)]);
        for (const [what, k] of badKeys) cases.push([`${op} with keys as ${what}`, () => table[op](k as HostKeys<K>, new Uint32Array(n))]);
      }
      for (const [what, k] of badKeys) {
        cases.push([`find with keys as ${what}`, () => findHost(table, k as HostKeys<K>)]);
        cases.push([`erase with keys as ${what}`, () => table.erase(k as HostKeys<K>)]);
      }
      if (hasApply) {
        const apply = (b: unknown) => hostApply(table, b as ApplyBatch<K>);
        const ops = Uint8Array.from({ length: n }, (_, i) => i % 4);
        cases.push(['apply(null)', () => apply(null)]);
        cases.push(['apply(undefined)', () => apply(undefined)]);
        cases.push(['apply with ops of the wrong length', () => apply({ ops: ops.subarray(1), keys: hk, values: new Uint32Array(n) })]);
        cases.push(['apply with ops as a Float32Array', () => apply({ ops: new Float32Array(n), keys: hk, values: new Uint32Array(n) })]);
        cases.push(['apply with values as a Float32Array', () => apply({ ops, keys: hk, values: new Float32Array(n) })]);
        cases.push(['apply with values of the wrong length', () => apply({ ops, keys: hk, values: new Uint32Array(n + 1) })]);
        for (const [what, k] of badKeys)
          cases.push([`apply with keys as ${what}`, () => apply({ ops, keys: k, values: new Uint32Array(n) })]);
      }
      const find = (out: unknown) => table.find(hk, { out } as never);
      cases.push(['find with out.values too short', () => find({ values: new Uint32Array(n - 1), found: new Uint8Array(n) })]);
      cases.push(['find with out.found too short', () => find({ values: new Uint32Array(n), found: new Uint8Array(n - 1) })]);
      cases.push(['find with out.values as a Float32Array', () => find({ values: new Float32Array(n), found: new Uint8Array(n) })]);
      cases.push(['find with out.found as a Uint32Array', () => find({ values: new Uint32Array(n), found: new Uint32Array(n) })]);
      cases.push(['find with out as null', () => find(null)]);
      const dk = upload(gpu, codec.words(keys));
      const dvShort = upload(gpu, new Uint32Array(n - 1));
      const df = gpu.upload(new Float32Array(n));
      cases.push(['insert with device values of the wrong length', () => table.insert(dk, dvShort)]);
      cases.push(['insert with device values of type f32', () => table.insert(dk, df as never)]);
      cases.push(['insert with host keys and device values of the wrong length', () => table.insert(hk, dvShort)]);
      const results = new Cases();
      try {
        for (const [what, call] of cases) {
          const e = await caught(call);
          await results.run(what, () => void expectError(e, 'InvalidArgumentError', what));
          await results.run(what, () => expectContents(table, codec, model, `after ${what}`));
          // Each case on its own: a call that changed the table moves the model along with it.
          const all = await table.retrieveAll();
          model.clear();
          model.insert(codec.list(all.keys), all.values, false);
        }
      } finally {
        for (const a of [dk, dvShort, df]) a.destroy();
      }
      results.finish('wrong argument types');
    });
  });
  add('malformed create options: InvalidArgumentError', async ({ gpu }) => {
    const cases: Array<[string, unknown]> = [
      ['no options', undefined],
      ['null options', null],
      ['capacity 0', { capacity: 0 }],
      ['capacity -1', { capacity: -1 }],
      ['capacity 1.5', { capacity: 1.5 }],
      ['capacity NaN', { capacity: Number.NaN }],
      ["capacity '64'", { capacity: '64' }],
      ['maxLoadFactor 0', { capacity: 64, maxLoadFactor: 0 }],
      ['maxLoadFactor 1.5', { capacity: 64, maxLoadFactor: 1.5 }],
      ['maxLoadFactor NaN', { capacity: 64, maxLoadFactor: Number.NaN }],
      ["growth 'no'", { capacity: 64, growth: 'no' }],
      ["bulkInsert 'sometimes'", { capacity: 64, bulkInsert: 'sometimes' }],
      ['an unknown option (capcity)', { capcity: 64 }],
      ['an unknown option next to capacity', { capacity: 64, loadFactor: 0.5 }],
    ];
    const results = new Cases();
    for (const [what, options] of cases) {
      let made: Dictionary<K> | undefined;
      const e = await caught(async () => {
        made = await factory.create(gpu, options as ConformanceOptions);
      });
      made?.destroy();
      await results.run(what, () => void expectError(e, 'InvalidArgumentError', `create with ${what}`));
    }
    results.finish('malformed create options');
  });

  // 5. Op codes.
  add(
    'bad op codes in a host apply (NaN, 1.5, -1, 4, 255): InvalidOpError naming the index, nothing applied',
    async ({ gpu, rng }) => {
      await withTable(factory, gpu, { capacity: 256 }, async (table) => {
        const model = new Model();
        const present = codec.distinct(rng, 16);
        await fill(table, codec, model, present, valuesFor(rng, 16), 'setup');
        const n = 12;
        const bad: Array<[number, 'array' | 'Uint8Array' | 'Uint32Array']> = [
          [Number.NaN, 'array'],
          [1.5, 'array'],
          [-1, 'array'],
          [4, 'array'],
          [4, 'Uint8Array'],
          [255, 'Uint8Array'],
          [7, 'Uint32Array'],
          [0x1_0000_0000 - 1, 'Uint32Array'],
        ];
        const results = new Cases();
        for (const [j, [code, as]] of bad.entries()) {
          const keys = [...present.slice(0, 6), ...codec.distinct(rng, n - 6)];
          const at = (3 + j) % n;
          const list = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? Op.insert : Op.erase) as number);
          list[at] = code;
          const ops = as === 'array' ? list : as === 'Uint8Array' ? Uint8Array.from(list) : Uint32Array.from(list);
          const what = `apply with op ${String(code)} at index ${at} (${as})`;
          await results.run(what, async () => {
            const e = expectError(
              await caught(() => hostApply(table, { ops, keys: codec.host(keys), values: new Uint32Array(n).fill(9) })),
              'InvalidOpError',
              what,
            );
            check(e.index === at, `${what}: the error names index ${e.index}`);
          });
          // A batch that was applied after all: the model follows the table, so later cases stay meaningful.
          const all = await table.retrieveAll();
          await results.run(`${what}: unchanged`, () => expectContents(table, codec, model, `after the refused ${what}`));
          model.clear();
          model.insert(codec.list(all.keys), all.values, false);
        }
        results.finish('bad op codes');
      });
    },
    hasApply,
  );
  add(
    'a bad op code in a device apply: the other ops are applied, then InvalidOpError naming the index',
    async ({ gpu, rng }) => {
      await withTable(factory, gpu, { capacity: 256 }, async (table) => {
        const model = new Model();
        const present = codec.distinct(rng, 16);
        await fill(table, codec, model, present, valuesFor(rng, 16), 'setup');
        const n = 24;
        const keys = [...present.slice(0, 12), ...codec.distinct(rng, n - 12)];
        const values = valuesFor(rng, n);
        const list = Uint32Array.from({ length: n }, (_, i) => [Op.insert, Op.insertOrAssign, Op.find, Op.erase][i % 4] as number);
        const at = 9;
        list[at] = 7;
        const ops = upload(gpu, list);
        const dk = upload(gpu, codec.words(keys));
        const dv = upload(gpu, values);
        try {
          const what = `device apply with op 7 at index ${at}`;
          const e = expectError(await caught(() => deviceApply(table, { ops, keys: dk, values: dv })), 'InvalidOpError', what);
          check(e.index === at, `${what}: the error names index ${e.index}`);
          keys.forEach((k, i) => {
            if (i === at) return;
            const op = list[i] as number;
            if (op === Op.insert || op === Op.insertOrAssign) model.insert([k], [values[i] as number], op === Op.insertOrAssign);
            else if (op === Op.erase) model.erase([k]);
          });
          await expectContents(table, codec, model, `after the ${what}`);
        } finally {
          for (const a of [ops, dk, dv]) a.destroy();
        }
      });
    },
    hasDeviceApply,
  );

  // 6. Stale state after encodes.
  const staleCheck =
    (kind: 'encodeInsert' | 'encodeErase' | 'encodeApply') =>
    async ({ gpu, rng, scale }: CheckContext) => {
      await withTable(factory, gpu, { capacity: 4096 * scale }, async (table) => {
        const model = new Model();
        const base = codec.distinct(rng, 100 * scale);
        await fill(table, codec, model, base, valuesFor(rng, base.length), 'setup');
        const batch = [...base.slice(0, 50 * scale), ...codec.distinct(rng, 80 * scale)];
        const values = valuesFor(rng, batch.length);
        const dk = upload(gpu, codec.words(batch));
        const dv = upload(gpu, values);
        const dops = upload(
          gpu,
          Uint32Array.from({ length: batch.length }, (_, i) => (i % 2 === 0 ? Op.insert : Op.erase)),
        );
        const out = gpu.createArray('u32', 2 * batch.length);
        try {
          await submitChecked(gpu, kind, (encoder) => {
            if (kind === 'encodeInsert') table.encodeInsert(encoder, dk.buffer, dv.buffer, batch.length);
            else if (kind === 'encodeErase') table.encodeErase(encoder, dk.buffer, batch.length);
            else
              (table.encodeApply as NonNullable<Dictionary<K>['encodeApply']>)(
                encoder,
                dops.buffer,
                dk.buffer,
                dv.buffer,
                batch.length,
                out.buffer,
              );
          });
          if (kind === 'encodeInsert') model.insert(batch, values, false);
          else if (kind === 'encodeErase') model.erase(batch);
          else
            batch.forEach((k, i) => {
              if (i % 2 === 0) model.insert([k], [values[i] as number], false);
              else model.erase([k]);
            });
        } finally {
          for (const a of [dk, dv, dops, out]) a.destroy();
        }
        const what = `the first host operation after an unsynced ${kind}`;
        // A host insert of fresh keys and some present ones: its count must not include the encoded batch.
        const more = [...base.slice(50 * scale, 70 * scale), ...codec.distinct(rng, 30 * scale)];
        const mv = valuesFor(rng, more.length);
        const r = await table.insert(codec.host(more), mv);
        const added = model.insert(more, mv, false);
        check(r.inserted === added, `${what} (insert of ${more.length}): inserted ${r.inserted}, the model added ${added}`);
        check(table.size === model.size, `${what}: table.size is ${table.size}, the model has ${model.size}`);
        // A second round: encode again, then erase first.
        const again = codec.distinct(rng, 40 * scale);
        const ak = upload(gpu, codec.words(again));
        const againValues = valuesFor(rng, again.length);
        const av = upload(gpu, againValues);
        try {
          await submitChecked(gpu, 'encodeInsert', (encoder) => table.encodeInsert(encoder, ak.buffer, av.buffer, again.length));
        } finally {
          ak.destroy();
          av.destroy();
        }
        model.insert(again, againValues, false);
        const gone = [...again.slice(0, 20 * scale), ...base.slice(60 * scale, 80 * scale)];
        const erased = await table.erase(codec.host(gone));
        const want = model.erase(gone);
        check(erased === want, `erase after an unsynced encodeInsert: returned ${erased}, the model erased ${want}`);
        check(table.size === model.size, `after erase: table.size is ${table.size}, the model has ${model.size}`);
        const f = await findHost(table, codec.host(again));
        for (const [i, k] of again.entries()) {
          check((f.found[i] === 1) === model.map.has(k), `after the second encodeInsert: key ${hex(k)} found=${f.found[i]}`);
          if (model.map.has(k)) model.map.set(k, f.values[i] as number);
        }
        model.open.clear();
        await expectContents(table, codec, model, 'retrieveAll after the encodes');
      });
    };
  add(
    'stale state: after an unsynced encodeInsert the next host operations count right (insert, erase, size, retrieveAll)',
    staleCheck('encodeInsert'),
  );
  add('stale state: after an unsynced encodeErase the next host operations count right', staleCheck('encodeErase'));
  add('stale state: after an unsynced encodeApply the next host operations count right', staleCheck('encodeApply'), hasApply);
  add('sync() after encodes brings size up to date', async ({ gpu, rng, scale }) => {
    await withTable(factory, gpu, { capacity: 4096 * scale }, async (table) => {
      const keys = codec.distinct(rng, 200 * scale);
      const dk = upload(gpu, codec.words(keys));
      const dv = upload(gpu, valuesFor(rng, keys.length));
      try {
        await submitChecked(gpu, 'encodeInsert', (encoder) => table.encodeInsert(encoder, dk.buffer, dv.buffer, keys.length));
        await table.sync();
        check(table.size === keys.length, `after encodeInsert of ${keys.length} and sync(): size ${table.size}`);
        await submitChecked(gpu, 'encodeErase', (encoder) => table.encodeErase(encoder, dk.buffer, keys.length / 2));
        await table.sync();
        check(table.size === keys.length / 2, `after encodeErase of ${keys.length / 2} and sync(): size ${table.size}`);
      } finally {
        dk.destroy();
        dv.destroy();
      }
    });
  });

  // 7. Several encodes in one encoder.
  add(
    'several encodes in one encoder (two encodeInserts, the second larger, then an encodeErase): nothing lost, no validation error',
    async ({ gpu, rng, scale }) => {
      await withTable(factory, gpu, { capacity: 16_384 * scale }, async (table) => {
        const model = new Model();
        const a = codec.distinct(rng, 100 * scale);
        // Larger than any per-batch scratch a table starts with (failed lists of 1024 and so on).
        const b = codec.distinct(rng, 5000 * scale).filter((k) => !a.includes(k));
        const va = valuesFor(rng, a.length);
        const vb = valuesFor(rng, b.length);
        const gone = [...a.slice(0, 20 * scale), ...b.slice(0, 500 * scale)];
        const arrays = [
          upload(gpu, codec.words(a)),
          upload(gpu, va),
          upload(gpu, codec.words(b)),
          upload(gpu, vb),
          upload(gpu, codec.words(gone)),
        ] as const;
        try {
          await submitChecked(gpu, 'encodeInsert, encodeInsert, encodeErase in one encoder', (encoder) => {
            table.encodeInsert(encoder, arrays[0].buffer, arrays[1].buffer, a.length);
            table.encodeInsert(encoder, arrays[2].buffer, arrays[3].buffer, b.length);
            table.encodeErase(encoder, arrays[4].buffer, gone.length);
          });
        } finally {
          for (const x of arrays) x.destroy();
        }
        model.insert(a, va, false);
        model.insert(b, vb, false);
        model.erase(gone);
        await table.sync();
        const all = [...a, ...b];
        const f = await findHost(table, codec.host(all));
        model.expectFind(all, f.found, f.values, 'find after the submitted encodes');
        await expectContents(table, codec, model, 'after the submitted encodes');
      });
    },
  );

  // 8. Ordering.
  add('an encode while a host insert is pending throws TableBusyError or loses nothing', async ({ gpu, rng, scale }) => {
    const waits: Array<[string, () => Promise<void>]> = [
      ['at once', async () => {}],
      ['after a microtask', () => Promise.resolve()],
      ['after a timer', () => new Promise((r) => setTimeout(r, 0))],
      ['after 5 ms', () => new Promise((r) => setTimeout(r, 5))],
    ];
    for (const [when, wait] of waits) {
      await withTable(factory, gpu, { capacity: 64 }, async (table) => {
        const model = new Model();
        // Large enough to grow a growing table several times while the encode comes in.
        const hostKeys = codec.distinct(rng, 2000 * scale);
        const hv = valuesFor(rng, hostKeys.length);
        const devKeys = codec.distinct(rng, 40).filter((k) => !hostKeys.includes(k));
        const dvals = valuesFor(rng, devKeys.length);
        const dk = upload(gpu, codec.words(devKeys));
        const dv = upload(gpu, dvals);
        try {
          const pending = table.insert(codec.host(hostKeys), hv);
          pending.catch(() => {});
          await wait();
          let busy: unknown;
          gpu.device.pushErrorScope('validation');
          try {
            const encoder = gpu.device.createCommandEncoder();
            table.encodeInsert(encoder, dk.buffer, dv.buffer, devKeys.length);
            gpu.submit([encoder.finish()]);
          } catch (e) {
            busy = e;
          }
          const validation = await gpu.device.popErrorScope();
          const r = await pending;
          model.insert(hostKeys, hv, false);
          const what = `encodeInsert ${when} after an un-awaited insert of ${hostKeys.length}`;
          check(validation === null, `${what}: WebGPU validation failed: ${validation?.message}`);
          if (busy !== undefined) expectError(busy, 'TableBusyError', what);
          else model.insert(devKeys, dvals, false);
          check(r.failed.length === 0 || !caps.has('growth'), `${what}: the host insert reported ${r.failed.length} failed`);
          await table.sync();
          const all = [...hostKeys, ...devKeys];
          const f = await findHost(table, codec.host(all));
          model.expectFind(all, f.found, f.values, `${what}: find afterwards`);
          check(table.size === model.size, `${what}: size ${table.size}, the model has ${model.size}`);
        } finally {
          dk.destroy();
          dv.destroy();
        }
      });
    }
  });
  add('host operations issued without awaiting complete in call order with the model results', (ctx) =>
    sequenceProperty(factory, ctx, {
      pool: 120 * ctx.scale,
      maxBatch: 40 * ctx.scale,
      maxCommands: 12,
      runs: runs(15, ctx.scale),
      capacity: 64,
      growth: caps.has('growth'),
      unawaited: true,
    }),
  );

  // 9. destroy.
  add(
    'destroy() with operations in flight: they and later ones reject with DestroyedError; destroy twice is fine',
    async ({ gpu, rng, scale }) => {
      const keys = codec.distinct(rng, 3000 * scale);
      const values = valuesFor(rng, keys.length);
      const kinds: Array<[string, (t: Dictionary<K>) => Promise<unknown>]> = [
        ['insert', (t) => t.insert(codec.host(keys), values)],
        ['find', (t) => findHost(t, codec.host(keys))],
        ['erase', (t) => t.erase(codec.host(keys))],
        ['retrieveAll', (t) => t.retrieveAll()],
      ];
      const results = new Cases();
      for (const [name, op] of kinds) {
        for (const delay of [false, true]) {
          const when = `${name} in flight${delay ? ' (1 ms in)' : ''}, then destroy()`;
          const table = await factory.create(gpu, { capacity: 64 });
          await table.insert(codec.host(keys.slice(0, 100)), values.slice(0, 100));
          const first = op(table);
          first.catch(() => {});
          if (delay) await new Promise((r) => setTimeout(r, 1));
          const second = table.insert(codec.host(keys.slice(0, 10)), values.slice(0, 10));
          second.catch(() => {});
          table.destroy();
          const e1 = await caught(() => first);
          await results.run(when, () => {
            // An operation already complete on the device may resolve; it must never fail with a WebGPU error.
            if (e1 !== undefined) expectError(e1, 'DestroyedError', `${when}: the in-flight ${name}`);
            else check(delay, `${when}: the in-flight ${name} resolved although destroy() came before it ran`);
          });
          const e3 = await caught(() => second);
          await results.run(when, () => void expectError(e3, 'DestroyedError', `${when}: an insert issued before destroy()`));
          const e4 = await caught(() => table.find(codec.host(keys.slice(0, 5))));
          await results.run(when, () => void expectError(e4, 'DestroyedError', `${when}: find after destroy()`));
          const e5 = await caught(() => table.clear());
          await results.run(when, () => void expectError(e5, 'DestroyedError', `${when}: clear after destroy()`));
          const e2 = await caught(() => table.destroy());
          await results.run(when, () => check(e2 === undefined, `${when}: a second destroy() threw ${describeError(e2)}`));
        }
      }
      // Encodes after destroy.
      const table = await factory.create(gpu, { capacity: 64 });
      table.destroy();
      const dk = upload(gpu, codec.words(keys.slice(0, 4)));
      const encoder = gpu.device.createCommandEncoder();
      try {
        const encodes: Array<[string, () => void]> = [
          ['encodeInsert', () => table.encodeInsert(encoder, dk.buffer, dk.buffer, 4)],
          ['encodeFind', () => table.encodeFind(encoder, dk.buffer, 4, dk.buffer, dk.buffer)],
          ['encodeErase', () => table.encodeErase(encoder, dk.buffer, 4)],
          ['encodeClear', () => table.encodeClear(encoder)],
        ];
        for (const [name, call] of encodes) {
          const e = await caught(call);
          await results.run(name, () => void expectError(e, 'DestroyedError', `${name} after destroy()`));
        }
      } finally {
        encoder.finish();
        dk.destroy();
      }
      await results.run('isDestroyed', () =>
        check(table.isDestroyed === true, `isDestroyed is ${String(table.isDestroyed)} after destroy()`),
      );
      results.finish('destroy');
    },
  );
  add('device loss: the next operation rejects with DeviceLostError', async ({ rng }) => {
    // A Gpu of its own: the shared test Gpu must survive.
    const own = await requestGpu({ allowSoftware: true, log: () => {} });
    try {
      const table = await factory.create(own, { capacity: 256 });
      const keys = codec.distinct(rng, 50);
      await table.insert(codec.host(keys), valuesFor(rng, 50));
      const lost = new Promise<void>((resolve) => own.onLost(() => resolve()));
      const inFlight = findHost(table, codec.host(keys));
      inFlight.catch(() => {});
      own.device.destroy();
      const e0 = await caught(() => inFlight);
      if (e0 !== undefined) expectError(e0, 'DeviceLostError', 'a find in flight when the device was lost');
      await lost;
      expectError(await caught(() => table.insert(codec.host(keys), valuesFor(rng, 50))), 'DeviceLostError', 'insert after device loss');
      expectError(await caught(() => findHost(table, codec.host(keys))), 'DeviceLostError', 'find after device loss');
      const e = await caught(() => table.destroy());
      check(e === undefined, `destroy() after device loss threw ${describeError(e)}`);
    } finally {
      own.destroy();
    }
  });

  add(
    'a device out of memory while create allocates: GpuOutOfMemoryError, every buffer it allocated destroyed, the next table sound',
    async ({ rng }) => {
      // A Gpu of its own, whose device reports running out of memory (simulated) while create allocates.
      const own = await requestGpu({ allowSoftware: true, log: () => {} });
      try {
        await fc.assert(
          fc.asyncProperty(fc.integer({ min: 16, max: 4096 }), async (capacity) => {
            const { error, allocated, kept } = await createOutOfMemory(own, () => factory.create(own, { capacity }));
            const what = `create with capacity ${capacity}`;
            expectError(error, 'GpuOutOfMemoryError', what);
            check(allocated > 0, `${what}: no buffer was allocated before the error`);
            check(kept.length === 0, `${what}: buffers left allocated after the failed create: ${kept.join(', ')}`);
            await withTable(factory, own, { capacity }, async (table) => {
              const keys = codec.distinct(rng, Math.min(64, capacity >> 2));
              const values = valuesFor(rng, keys.length);
              const model = new Model();
              await fill(table, codec, model, keys, values, `${what}, then a table created after it`);
              await expectContents(table, codec, model, `${what}, then a table created after it`);
            });
          }),
          { seed: rng.u32() | 0, numRuns: 4 },
        );
      } finally {
        own.destroy();
      }
    },
  );

  // 10. Colliding keys.
  add(
    'colliding keys with growth on: nothing fails, every key is found',
    async ({ gpu, rng, scale }) => {
      const collide = factory.collidingKeys as NonNullable<DictionaryFactory<K>['collidingKeys']>;
      for (const capacity of [256, 1024]) {
        await withTable(factory, gpu, { capacity, growth: true }, async (table) => {
          const model = new Model();
          const words = collide(capacity, 600 * scale, rng);
          const keys: Key[] =
            factory.keyType === 'u64'
              ? Array.from(
                  { length: words.length / 2 },
                  (_, i) => (BigInt(words[2 * i + 1] as number) << 32n) | BigInt(words[2 * i] as number),
                )
              : Array.from(words);
          // One batch, then more in small batches.
          const first = keys.slice(0, keys.length / 2);
          const values = valuesFor(rng, keys.length);
          const r = await table.insert(codec.host(first), values.subarray(0, first.length));
          check(
            r.failed.length === 0,
            `${first.length} colliding keys at capacity ${capacity}: ${r.failed.length} failed (first index ${r.failed[0]})`,
          );
          model.insert(first, values, false);
          for (let i = first.length; i < keys.length; i += 25) {
            const batch = keys.slice(i, i + 25);
            const rr = await table.insert(codec.host(batch), values.subarray(i, i + batch.length));
            check(rr.failed.length === 0, `colliding keys ${i}..${i + batch.length} at capacity ${capacity}: ${rr.failed.length} failed`);
            model.insert(batch, values.subarray(i, i + batch.length), false);
          }
          const f = await findHost(table, codec.host(keys));
          model.expectFind(keys, f.found, f.values, `find of ${keys.length} colliding keys`);
          await expectContents(table, codec, model, 'colliding keys export');
        });
      }
    },
    caps.has('growth') && factory.collidingKeys !== undefined,
  );

  // 11. Growth sized by new keys.
  add(
    'growth is sized by new keys: 100 000 entries of 1 000 distinct keys stay near what 1 000 need; re-assigning present keys keeps the capacity',
    async ({ gpu, rng, scale }) => {
      const distinct = 1000 * scale;
      const n = 100_000 * scale;
      const maxLoadFactor = 0.8;
      const keys = codec.distinct(rng, distinct);
      const batch = Array.from({ length: n }, (_, i) => (i < distinct ? keys[i] : keys[rng.below(distinct)]) as Key);
      const values = valuesFor(rng, n);
      const hostBatch = codec.host(batch);
      const needed = Math.ceil(distinct / maxLoadFactor);
      const results = new Cases();
      // One batch of many duplicates into a small table.
      await results.run('one batch', () =>
        withTable(factory, gpu, { capacity: 64, growth: true, maxLoadFactor }, async (table) => {
          const r = await table.insert(hostBatch, values);
          const what = `insert of ${n} entries of ${distinct} distinct keys`;
          check(r.failed.length === 0, `${what}: ${r.failed.length} failed`);
          check(r.inserted === distinct, `${what}: inserted ${r.inserted}, expected ${distinct}`);
          check(
            table.capacity <= 4 * needed,
            `${what}: the capacity is ${table.capacity}; ${distinct} keys need ${needed} at load ${maxLoadFactor} (bound ${4 * needed})`,
          );
        }),
      );
      // Keys already present: insertOrAssign (of the big batch, then of each key once) grows nothing.
      await results.run('present keys', () =>
        withTable(factory, gpu, { capacity: 64, growth: true, maxLoadFactor }, async (table) => {
          for (let i = 0; i < distinct; i += 100) await table.insert(codec.host(keys.slice(i, i + 100)), values.subarray(i, i + 100));
          check(table.size === distinct, `after inserting ${distinct} keys in batches of 100: size ${table.size}`);
          const capacity = table.capacity;
          const r2 = await table.insertOrAssign(hostBatch, values);
          check(
            r2.inserted === 0 && table.capacity === capacity,
            `insertOrAssign of ${n} entries of ${distinct} present keys: inserted ${r2.inserted}, capacity ${capacity} -> ${table.capacity}`,
          );
          const r3 = await table.insertOrAssign(codec.host(keys), valuesFor(rng, distinct));
          check(
            r3.inserted === 0 && table.capacity === capacity,
            `insertOrAssign of the ${distinct} present keys: inserted ${r3.inserted}, capacity ${capacity} -> ${table.capacity}`,
          );
          check(table.size === distinct, `size ${table.size}, expected ${distinct}`);
          if (table.apply && caps.has('apply')) {
            // A mixed batch of insert ops on present keys (and finds) grows nothing either.
            const ops = Uint8Array.from({ length: n }, (_, i) => (i % 4 === 3 ? Op.find : i % 2 === 0 ? Op.insert : Op.insertOrAssign));
            const r4 = await table.apply({ ops, keys: hostBatch, values });
            check(
              table.capacity === capacity && r4.failed.length === 0 && table.size === distinct,
              `apply of ${n} insert and find ops on ${distinct} present keys: capacity ${capacity} -> ${table.capacity}, size ${table.size}`,
            );
          }
        }),
      );
      results.finish('growth sized by new keys');
    },
    caps.has('growth'),
  );

  // 12. Error names.
  add('errors keep their documented name and code (minification-proof) and are GpuhashErrors', async ({ gpu, rng }) => {
    // The vocabulary itself: a renamed subclass (what a minifier does to class names) keeps the documented name.
    const results = new Cases();
    const renamed = { x: class extends InvalidArgumentError {} }.x;
    const r = new renamed('m');
    await results.run('renamed', () =>
      check(r.name === 'InvalidArgumentError', `a renamed InvalidArgumentError subclass reports name '${r.name}'`),
    );
    await withTable(factory, gpu, { capacity: 256 }, async (table) => {
      const keys = codec.distinct(rng, 8);
      const hk = codec.host(keys);
      const provoked: Array<[ErrorName, string, () => unknown]> = [
        ['InvalidArgumentError', 'insert with Float32Array values', () => table.insert(hk, new Float32Array(8) as never)],
        ['InvalidArgumentError', 'insert with mismatched lengths', () => table.insert(hk, new Uint32Array(3))],
      ];
      if (reserved.length > 0) {
        const bad = [...keys];
        bad[2] = reserved[0] as number;
        provoked.push(['ReservedKeyError', 'insert of a reserved key', () => table.insert(codec.host(bad), new Uint32Array(8))]);
      }
      if (hasApply) {
        provoked.push([
          'InvalidOpError',
          'apply with op 9',
          () => hostApply(table, { ops: Uint8Array.of(0, 9, 0, 0, 0, 0, 0, 0), keys: hk }),
        ]);
      }
      for (const [name, what, call] of provoked) {
        const e = await caught(call);
        await results.run(what, () => {
          check(e instanceof GpuhashError, `${what}: threw ${describeError(e)}, not a GpuhashError`);
          expectError(e, name, what);
        });
      }
    });
    const table = await factory.create(gpu, { capacity: 64 });
    table.destroy();
    const e = await caught(() => table.insert(codec.host(codec.distinct(rng, 1)), new Uint32Array(1)));
    await results.run('destroyed', () => void expectError(e, 'DestroyedError', 'insert after destroy'));
    results.finish('error names');
  });

  return defineChecks(`conformance/${factory.name}`, checks);
}
