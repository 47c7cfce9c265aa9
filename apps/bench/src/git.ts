import { execFileSync } from 'node:child_process';

/** The revision a run records. */
export interface GitInfo {
  revision: string;
  /** Uncommitted changes to tracked files; null when unknown (revision given from outside). */
  dirty: boolean | null;
}

function git(args: string[], cwd: string): string | null {
  try {
    return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 }).trim();
  } catch {
    return null;
  }
}

/**
 * The given revision (--git-revision, else $GPUHASH_GIT_REVISION: the GPU host has no git),
 * else `git rev-parse HEAD` where the bench runs, else 'unknown'.
 */
export function gitInfo(given: string | undefined, env: Record<string, string | undefined>, cwd: string): GitInfo {
  const fromOutside = given ?? env.GPUHASH_GIT_REVISION;
  if (fromOutside) return { revision: fromOutside, dirty: null };
  const revision = git(['rev-parse', 'HEAD'], cwd);
  if (!revision) return { revision: 'unknown', dirty: null };
  const status = git(['status', '--porcelain', '--untracked-files=no'], cwd);
  return { revision, dirty: status === null ? null : status.length > 0 };
}
