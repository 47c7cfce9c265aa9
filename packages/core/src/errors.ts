/**
 * Typed errors. Every message says what went wrong and what to do about it; `code` is stable
 * for programs that branch on the kind of failure.
 */
export type GpuhashErrorCode =
  | 'GPU_UNAVAILABLE'
  | 'VALIDATION'
  | 'OUT_OF_MEMORY'
  | 'LIMIT_EXCEEDED'
  | 'DESTROYED'
  | 'DEVICE_LOST'
  | 'INVALID_ARGUMENT';

export class GpuhashError extends Error {
  readonly code: GpuhashErrorCode;
  constructor(code: GpuhashErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** No WebGPU adapter could be had (or only a software one, when software was forbidden). */
export class GpuUnavailableError extends GpuhashError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('GPU_UNAVAILABLE', message, options);
  }
}

/** WebGPU reported a validation error inside a gpuhash operation: a bug in gpuhash or misuse of a caller's buffer. */
export class GpuValidationError extends GpuhashError {
  readonly operation: string;
  constructor(operation: string, gpuMessage: string) {
    super('VALIDATION', `${operation}: WebGPU validation failed: ${gpuMessage}`);
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
    this.limit = limit;
    this.requested = requested;
    this.maximum = maximum;
  }
}

/** An object (a Gpu, a table, a device array) was used after `destroy()`. */
export class DestroyedError extends GpuhashError {
  constructor(what: string) {
    super('DESTROYED', `${what} was destroyed; create a new one to continue.`);
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
    this.reason = reason;
  }
}

/** An argument is malformed (a length mismatch, a wrong element type, a non-integer size). */
export class InvalidArgumentError extends GpuhashError {
  constructor(message: string) {
    super('INVALID_ARGUMENT', message);
  }
}
