// `node --import ./test/support/run-source.mjs`: our TypeScript source runs as it is (source-hooks.mjs).
import { register } from 'node:module';

register('./source-hooks.mjs', import.meta.url);
