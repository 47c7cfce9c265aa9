// Bundles the checks runner into one ESM file (webgpu external) for ../shared/gpu-host/pack.sh.
import { execFileSync } from 'node:child_process';

execFileSync(process.execPath, ['bundle-entry.mjs', 'src/main.ts', 'dist/gpu-check.mjs'], { stdio: 'inherit' });
console.log('wrote dist/gpu-check.mjs');
