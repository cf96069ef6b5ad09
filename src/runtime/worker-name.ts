/** How a process names itself in the journal (claims, the home lock): host, pid and a tag. */
import { hostname } from 'node:os';

/** `host:pid:tag`; the tag tells apart two names taken by one process. */
export function workerName(): string {
  return `${hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}
