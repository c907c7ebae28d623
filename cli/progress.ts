/**
 * A one-line progress bar on stderr, drawn only when stderr is a terminal
 * (docs/CLI.md), so logs and pipes never receive control characters.
 */
export interface Progress {
  tick(done: number): void;
  done(): void;
}

export function progress(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY || total < 2) return { tick: () => undefined, done: () => undefined };
  const width = 24;
  const draw = (n: number): void => {
    const filled = Math.round((width * n) / total);
    stream.write(`\r${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${n}/${total}`);
  };
  draw(0);
  return {
    tick: draw,
    done: () => void stream.write(`\r${' '.repeat(label.length + width + 16)}\r`),
  };
}
