/**
 * Synchronous writes with the stop signals held, so that Ctrl-C cannot end the process between a file's first and
 * last byte (cli/outputs.ts's outputs, cli/project-writer.ts's projects, runtime/history/log.ts's appends).
 */

/** The signals a user stops a command with; their default action would end the process mid-write. */
const STOPS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs `write` (synchronous) with the stop signals held: by default a signal ends the process at once, which left an
 * output's temporary file behind (13-16 MB of a `.Y.mtx.<pid>.<hex>.tmp` after Ctrl-C). With a listener the signal
 * only queues an event, which the event loop delivers after `write` returns, every output written or none; the
 * listeners stay until then, and a signal that came is raised again with its default action (exit 130 for SIGINT).
 * Only the write is held: a long computation before it still stops at once. A signal the process already listens
 * for (an application that links the runtime and handles SIGINT itself) is left to that listener.
 */
export function holdSignals<T>(write: () => T): T {
  let caught: NodeJS.Signals | undefined;
  const note = (s: NodeJS.Signals): void => {
    caught ??= s;
  };
  const held = STOPS.filter((s) => process.listenerCount(s) === 0);
  for (const s of held) process.on(s, note);
  try {
    return write();
  } finally {
    // A signal queued during `write` reaches its listener in the event loop's second turn, not the first (Node 20,
    // SIGINT and SIGTERM sent mid-write: one setImmediate saw none of them, two saw all 15): so two turns.
    if (held.length > 0)
      setImmediate(() =>
        setImmediate(() => {
          for (const s of held) process.off(s, note);
          if (caught) process.kill(process.pid, caught);
        }),
      );
  }
}
