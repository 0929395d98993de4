#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm run build`, run by `npm ci`).
import { launch } from '../dist/cli/launch.js';

launch(process.argv).then((code) => {
  process.exitCode = code;
});
