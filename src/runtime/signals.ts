/** The one place that listens for SIGINT/SIGTERM. */

/**
 * Calls `onStop` with the first SIGINT or SIGTERM, until then or until closed: a command
 * leaves no listener behind when it ends (a test runs many in its own process).
 */
export function listenForStopSignal(onStop: (signal: NodeJS.Signals) => void): { close(): void } {
  const close = () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
  const stop = (signal: NodeJS.Signals) => {
    close();
    onStop(signal);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  return { close };
}
