/** How a process names itself in the journal (claims, the home lock): host, pid and a tag. */
import { hostname } from 'node:os';

/** This host's name in the journal: the `hostName` setting, or the machine's hostname. */
export function hostNameOf(setting: string | null): string {
  return setting ?? hostname();
}

/** `host:pid:tag`; the tag tells apart two names taken by one process. */
export function workerName(host: string): string {
  return `${host}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}

/** The host of a worker's name (`host:pid:tag`), the name itself when it is not one. */
export function hostOfWorker(name: string): string {
  return name.replace(/:\d+:[a-z0-9]+$/, '');
}
