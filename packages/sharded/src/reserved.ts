import { ReservedKeyError } from '@gpuhash/core';
import type { ShardLink } from './link';

/** Keys that a table may reserve as slot markers: the top 16 u32 values (u64: with the high word all ones). */
const PROBED = Array.from({ length: 16 }, (_, i) => 0xffffffff - i);

/**
 * The reserved keys of the shards' tables, learnt once by asking shard 0 to find the top 16 key
 * values (a find changes nothing; a table refuses reserved keys by index), so a sharded batch
 * holding one is refused whole before any shard sees it, as a single table refuses it.
 */
export class ReservedKeys {
  private constructor(
    readonly wordsPerKey: 1 | 2,
    /** Reserved low words (u64: with a high word of 0xffffffff). */
    private readonly low: ReadonlySet<number>,
    readonly names: string,
  ) {}

  static async probe(link: ShardLink, wordsPerKey: 1 | 2): Promise<ReservedKeys> {
    const words = new Uint32Array(PROBED.length * wordsPerKey);
    PROBED.forEach((k, i) => {
      if (wordsPerKey === 1) words[i] = k;
      else {
        words[2 * i] = k;
        words[2 * i + 1] = 0xffffffff;
      }
    });
    const reserved = new Set<number>();
    let names = 'slot-marker';
    try {
      await link.call('find', [words]);
    } catch (error) {
      const e = error as { code?: string; indices?: Uint32Array; message?: string };
      if (e.code !== 'RESERVED_KEY' || !e.indices) throw error;
      for (const i of e.indices) reserved.add(PROBED[i] as number);
      names = /the table's (.+) markers/.exec(e.message ?? '')?.[1] ?? names;
    }
    return new ReservedKeys(wordsPerKey, reserved, names);
  }

  /** Throws ReservedKeyError (nothing applied) naming every batch index of a reserved key. */
  check(where: string, words: Uint32Array): void {
    if (this.low.size === 0) return;
    const found: number[] = [];
    if (this.wordsPerKey === 1) {
      for (let i = 0; i < words.length; i++) {
        const w = words[i] as number;
        if (w >= 0xfffffff0 && this.low.has(w)) found.push(i);
      }
    } else {
      for (let i = 0; i < words.length / 2; i++) {
        const lo = words[2 * i] as number;
        if (words[2 * i + 1] === 0xffffffff && lo >= 0xfffffff0 && this.low.has(lo)) found.push(i);
      }
    }
    if (found.length > 0) throw new ReservedKeyError(where, Uint32Array.from(found), this.names, 'none');
  }
}
