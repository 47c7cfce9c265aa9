/** Hash functions: each a WGSL module (functions prefixed `hash_`) and a CPU twin returning the same bits. */
export { bitHash1, bitHash2, bitHashModule } from './bithash';
export { fmix32, fmix32Module } from './fmix32';
export { fmix64, fmix64Module, fmix64U32, fmix64Words } from './fmix64';
export { jenkins, jenkinsModule, jenkinsSeeded } from './jenkins';
export type { U64Words } from './u64';
export { u64Add, u64FromWords, u64Module, u64Mul, u64MulWide, u64ToWords } from './u64';
export { byteMatch, u32AddSat, u64AddSat, u64Le, u64Lt, u64OrderModule } from './u64-order';
export type { UniversalParams } from './universal';
export { randomUniversalParams, UNIVERSAL_PRIME, universalHash, universalHashModP, universalModule } from './universal';
export { xxhash32, xxhash32Module } from './xxhash32';
