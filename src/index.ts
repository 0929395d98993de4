/** Library entry: the error family, the wire contract (and, as they land, client, pipeline and sandbox). */
export * from './errors.js';
export * from './contract/index.js';
export { VERSION } from './version.js';
