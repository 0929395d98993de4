// Loaded with `node --import` by tests: writes the URL of every module the process
// loads, one a line, to the file named by ENRICH_TEST_MODULES_OUT (module resolve hooks
// run on their own thread, so they append to the file themselves).
import { register } from 'node:module';

register('./record-modules-hooks.mjs', import.meta.url);
