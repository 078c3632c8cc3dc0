// Use index.js directly, this file provided for backwards compat
// with former shim.mjs only.
export * from '../index.js';
export { default } from '../index.js';
