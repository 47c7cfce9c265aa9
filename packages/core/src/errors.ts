/**
 * Typed errors. Every message says what went wrong and what to do about it; `code` is stable
 * for programs that branch on the kind of failure, and `name` is written out per class (a
 * minifier renames classes, so it is never taken from the constructor).
 */
export type GpuhashErrorCode =
  | 'GPU_UNAVAILABLE'
  | 'VALIDATION'
  | 'OUT_OF_MEMORY'
  | 'LIMIT_EXCEEDED'
  | 'DESTROYED'
  | 'DEVICE_LOST'
  | 'INVALID_ARGUMENT'
  | 'INVALID_OP'
  | 'RESERVED_KEY'
  | 'TABLE_BUSY'
  | 'CAPACITY'
  | 'SHARD_FAILED'
  | 'INTERNAL';

/**
 * The base class of every error gpuhash throws. `code` says which kind it is, so callers can
 * branch on it without `instanceof` checks across package copies.
 */
export class GpuhashError extends Error {
  readonly code: GpuhashErrorCode;
  constructor(code: GpuhashErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = 'GpuhashError';
  }
}

/** No WebGPU adapter could be had (or only a software one, when software was forbidden). */
export class GpuUnavailableError extends GpuhashError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('GPU_UNAVAILABLE', message, options);
    this.name = 'GpuUnavailableError';
  }
}

/** WebGPU reported a validation error inside a gpuhash operation: a bug in gpuhash or misuse of a caller's buffer. */
export class GpuValidationError extends GpuhashError {
  readonly operation: string;
  constructor(operation: string, gpuMessage: string) {
    super('VALIDATION', `${operation}: WebGPU validation failed: ${gpuMessage}`);
    this.name = 'GpuValidationError';
    this.operation = operation;
  }
}

/** The device ran out of memory inside a gpuhash operation. */
export class GpuOutOfMemoryError extends GpuhashError {
  readonly operation: string;
  constructor(operation: string, gpuMessage: string) {
    super(
      'OUT_OF_MEMORY',
      `${operation}: the GPU is out of memory (${gpuMessage}). Free other tables or buffers, or ask for a smaller capacity.`,
    );
    this.name = 'GpuOutOfMemoryError';
    this.operation = operation;
  }
}

/** A request that a device limit forbids, caught before WebGPU sees it. */
export class LimitExceededError extends GpuhashError {
  readonly limit: string;
  readonly requested: number;
  readonly maximum: number;
  constructor(what: string, limit: string, requested: number, maximum: number, advice: string) {
    super('LIMIT_EXCEEDED', `${what} needs ${requested} but the device's ${limit} is ${maximum}. ${advice}`);
    this.name = 'LimitExceededError';
    this.limit = limit;
    this.requested = requested;
    this.maximum = maximum;
  }
}

/** An object (a Gpu, a table, a device array) was used after `destroy()`. */
export class DestroyedError extends GpuhashError {
  constructor(what: string) {
    super('DESTROYED', `${what} was destroyed; create a new one to continue.`);
    this.name = 'DestroyedError';
  }
}

/** The GPU device was lost (driver reset, `destroy()`, tab backgrounded too long). All its buffers are gone. */
export class DeviceLostError extends GpuhashError {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(
      'DEVICE_LOST',
      `the GPU device was lost (${reason}${message ? `: ${message}` : ''}); its tables and buffers are gone. Call requestGpu() again and rebuild them.`,
    );
    this.name = 'DeviceLostError';
    this.reason = reason;
  }
}

/** An argument is malformed (a length mismatch, a wrong element type, a non-integer size, an unknown option). */
export class InvalidArgumentError extends GpuhashError {
  constructor(message: string) {
    super('INVALID_ARGUMENT', message);
    this.name = 'InvalidArgumentError';
  }
}

/** A mixed batch holds an op code other than 0 insert, 1 insertOrAssign, 2 find, 3 erase. */
export class InvalidOpError extends GpuhashError {
  /** Batch index of the first bad op code, and the code found there. */
  readonly index: number;
  readonly op: number;
  constructor(operation: string, index: number, op: number, applied: 'none' | 'others') {
    super(
      'INVALID_OP',
      `${operation}: op ${String(op)} at index ${index} is not an op code (0 insert, 1 insertOrAssign, 2 find, 3 erase); ${
        applied === 'none' ? 'nothing in this batch was applied' : 'that entry was skipped, the others were applied'
      }.`,
    );
    this.name = 'InvalidOpError';
    this.index = index;
    this.op = op;
  }
}

/**
 * A batch holds keys that the table reserves as slot markers (empty, tombstone, ...). Host
 * batches are checked before anything runs (`applied: 'none'`); device-resident batches are
 * checked on the GPU, which applies the other entries (`applied: 'others'`, and `partial` says
 * what they did).
 */
export class ReservedKeyError extends GpuhashError {
  /** Batch indices of the reserved keys, smallest first (all of them, or as many as the failed list kept). */
  readonly indices: Uint32Array;
  readonly firstIndex: number;
  readonly applied: 'none' | 'others';
  /** What the rest of a device batch did (an insert's or apply's result, an erase's count). */
  readonly partial: unknown;
  constructor(operation: string, indices: Uint32Array, markers: string, applied: 'none' | 'others', partial?: unknown) {
    const first = indices[0] ?? -1;
    const more = indices.length > 1 ? ` (and ${indices.length - 1} more)` : '';
    super(
      'RESERVED_KEY',
      `${operation}: the key at index ${first}${more} is reserved (the table's ${markers} markers); ${
        applied === 'none'
          ? 'nothing in this batch was applied. Map it to another key before inserting.'
          : 'it was skipped, the other entries were applied.'
      }`,
    );
    this.name = 'ReservedKeyError';
    this.indices = indices;
    this.firstIndex = first;
    this.applied = applied;
    this.partial = partial;
  }
}

/**
 * A device-side encode was called on a table while one of its host operations is pending: the
 * host operation may reallocate the table under the encoded passes. Await it first.
 */
export class TableBusyError extends GpuhashError {
  constructor(what: string, operation: string) {
    super(
      'TABLE_BUSY',
      `${what}: ${operation} was called while a host operation on the table is pending (it may grow or rebuild the table under the encoded passes). Await the pending operation (or table.sync()) first, then encode.`,
    );
    this.name = 'TableBusyError';
  }
}

/** No capacity the table can reach holds the keys (within its probe or eviction bounds and the device's limits). */
export class CapacityError extends GpuhashError {
  constructor(message: string) {
    super('CAPACITY', message);
    this.name = 'CapacityError';
  }
}

/**
 * A shard of a sharded table failed: its device was lost, its worker thread or process died, or
 * its table threw. The operation's entries routed to the healthy shards were applied (`partial`
 * says what they did, in the caller's batch order, where the operation got that far); the entries
 * routed to the failed shards (`indices`) may or may not have been: nothing else is unknown. Later
 * operations that touch a dead shard fail the same way; those that touch only live shards go on.
 */
export class ShardError extends GpuhashError {
  /** The first failed shard, and every shard that failed in this operation (ascending). */
  readonly shard: number;
  readonly shards: readonly number[];
  readonly operation: string;
  /** Batch indices routed to the failed shards, ascending: their outcome is unknown. */
  readonly indices: Uint32Array;
  /** What the operation did on the healthy shards (an insert's, find's or apply's result, an erase's count), if anything. */
  readonly partial: unknown;
  /** Whether the failed shards are gone for good (a lost device, a dead worker) rather than one operation's error. */
  readonly dead: boolean;
  constructor(
    operation: string,
    shards: readonly number[],
    indices: Uint32Array,
    cause: unknown,
    options: { partial?: unknown; dead: boolean },
  ) {
    const first = shards[0] ?? -1;
    const why = cause instanceof Error ? cause.message : String(cause);
    const which = shards.length > 1 ? `shards ${shards.join(', ')} failed` : `shard ${first} failed`;
    super(
      'SHARD_FAILED',
      `${operation}: ${which} (${why}); ${indices.length} ${indices.length === 1 ? 'entry' : 'entries'} of this batch went to ${
        shards.length > 1 ? 'them' : 'it'
      } and may or may not have been applied (error.indices), the others were (error.partial). ${
        options.dead
          ? 'The shard is gone: operations that touch it fail the same way; rebuild the sharded table (re-inserting what it held) to recover.'
          : 'The shard is still usable.'
      }`,
      { cause },
    );
    this.name = 'ShardError';
    this.shard = first;
    this.shards = shards;
    this.operation = operation;
    this.indices = indices;
    this.partial = options.partial;
    this.dead = options.dead;
  }
}

/** An internal invariant broke: a gpuhash bug. Please report it with the message. */
export class InternalError extends GpuhashError {
  constructor(message: string) {
    super('INTERNAL', `${message}; this is a gpuhash bug, please report it.`);
    this.name = 'InternalError';
  }
}
