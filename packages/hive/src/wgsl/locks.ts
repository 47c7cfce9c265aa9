import type { WgslModule } from '@gpuhash/kernels';
import { cooperativeVariant } from './cooperative-variant';
import { overflowModule } from './overflow';
import { talliesModule } from './tallies';
import { wcmeModule } from './wcme';

/**
 * Bucket locks (word lock_base + b of the masks binding): taken only by the locked pass and the stash drain, only
 * ever tried (one atomicOr of the lock bit by the group's leader; bit 1 is the overflow bit), never
 * waited on inside a loop. And the
 * stores made under them, settled before the unlock. Needs `slots`, `masks`, `params`, tallies.
 */
export function locksModule(subgroups: boolean): WgslModule {
  return cooperativeVariant(
    'hive.locks',
    subgroups,
    /* wgsl */ `
/**
 * Stores under a lock, made visible before the lock is released. WGSL has no fence: the leader
 * re-reads what it wrote until the reads return it (atomics are performed at the point of
 * coherence, so the next lock holder will see them too). It waits on its own stores only.
 */
fn hv_settle(g: u32, key: u32, value: u32) {
  for (var t = 0u; t < 4096u; t++) {
    if (atomicLoad(&slots[hv_kw(g)]) == key && atomicLoad(&slots[hv_vw(g)]) == value) { break; }
  }
}
/** hv_settle for two slots at once: one round trip a try. */
fn hv_settle2(g1: u32, k1: u32, v1: u32, g2: u32, k2: u32, v2: u32) {
  for (var t = 0u; t < 4096u; t++) {
    let a = atomicLoad(&slots[hv_kw(g1)]);
    let b = atomicLoad(&slots[hv_vw(g1)]);
    let c = atomicLoad(&slots[hv_kw(g2)]);
    let d = atomicLoad(&slots[hv_vw(g2)]);
    if (a == k1 && b == v1 && c == k2 && d == v2) { break; }
  }
}
fn hv_store_locked(g: u32, key: u32, value: u32) {
  hv_store_pair(g, key, value);
  hv_placed(key, g);
  hv_settle(g, key, value);
}
fn hv_move_locked(src: u32, dst: u32) {
  hv_store_locked(dst, atomicLoad(&slots[hv_kw(src)]), atomicLoad(&slots[hv_vw(src)]));
}

/** Tries bucket b's lock once (the leader lane's atomic); the answer on every lane. */
fn hv_lock(b: u32, leader: u32) -> bool {
  var ok = 0u;
  if (cg_lane() == leader) {
    if ((atomicOr(&masks[params.lock_base + b], LOCK_BIT) & LOCK_BIT) == 0u) {
      ok = 1u;
      count(T_LOCK_ACQUISITIONS, 1u);
    } else {
      count(T_LOCK_CONFLICTS, 1u);
    }
  }
  return cg_broadcast(ok, leader) == 1u;
}

fn hv_unlock(b: u32, leader: u32) {
  if (cg_lane() == leader) { atomicAnd(&masks[params.lock_base + b], ~LOCK_BIT); }
}
`,
    { requires: [wcmeModule(subgroups), talliesModule, overflowModule], needs: ['slots', 'masks', 'params'] },
  );
}
