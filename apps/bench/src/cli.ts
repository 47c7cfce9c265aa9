// gpuhash-bench: the command-line entry (bundled to dist/gpuhash-bench.mjs with a node shebang).
import { main } from './main';

const status = await main(process.argv.slice(2));
// Dawn keeps the event loop alive; the device is destroyed, so leave now.
process.exit(status);
