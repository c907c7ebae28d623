/**
 * How dype calibrate times a multi-thread call (cli/calibrate-timing.ts): a
 * timing whose workers had no cores of their own (joins on the caller's core,
 * or too few of the chunks run by them) is taken again, the least crowded
 * kept; the fit leaves out the timings still crowded, unless all are.
 */
import { describe, expect, it } from 'vitest';
import {
  crowdedLeftOut,
  crowding,
  MIN_HELP,
  PACKED_SHARE,
  placementBetween,
  RETAKE_HELP,
  RETAKES,
  SpeedProbe,
  timeRuns,
} from '../../cli/calibrate-timing.js';
import type { WorkerPlacement } from '../../runtime/wasm/executor.js';

const at = (p: Partial<WorkerPlacement>): WorkerPlacement => ({
  splitOps: 0,
  joins: 0,
  joinsOnCaller: 0,
  chunks: 0,
  workerChunks: 0,
  ...p,
});

describe('calibrate timing', () => {
  it('placementBetween: the shares of joins on the caller and of chunks run by workers between two counts', () => {
    expect(
      placementBetween(
        at({ joins: 10, joinsOnCaller: 2, chunks: 80, workerChunks: 30 }),
        at({ joins: 30, joinsOnCaller: 7, chunks: 240, workerChunks: 90 }),
      ),
    ).toEqual({ onCaller: 0.25, workerChunks: 60 / 160 });
    // Nothing joined or split, a backend that knows no core, no counts at all.
    expect(placementBetween(at({}), at({}))).toEqual({ onCaller: null, workerChunks: null });
    expect(
      placementBetween(at({ joinsOnCaller: null }), at({ joins: 4, joinsOnCaller: null, chunks: 8, workerChunks: 4 })),
    ).toEqual({ onCaller: null, workerChunks: 0.5 });
    expect(placementBetween(undefined, undefined)).toEqual({ onCaller: null, workerChunks: null });
  });

  it('crowding: 0 for workers on cores of their own, else how far from it', () => {
    expect(crowding({ onCaller: 0, workerChunks: 0.5 }, 2)).toBe(0);
    expect(crowding({ onCaller: PACKED_SHARE, workerChunks: 0.5 * MIN_HELP }, 2)).toBe(0);
    expect(crowding({ onCaller: 1, workerChunks: 0.5 }, 2)).toBe(1);
    expect(crowding({ onCaller: 0, workerChunks: 0.05 }, 2)).toBeCloseTo(0.9);
    // At 4 threads the workers' even share is 3/4 of the chunks.
    expect(crowding({ onCaller: null, workerChunks: 0.3 }, 4)).toBeCloseTo(0.6);
    expect(crowding({ onCaller: null, workerChunks: null }, 2)).toBe(0);
  });

  it('a crowded multi-thread timing is taken again after a longer settle, and the least crowded kept', () => {
    // Each take's workers, in turn: on the caller's core, then running too few chunks, then on cores of their own.
    const takes = [
      { onCaller: 1, worker: 0.5 },
      { onCaller: 0, worker: 0.1 },
      { onCaller: 0, worker: 0.5 },
    ];
    let take = -1;
    let reads = 0;
    let counts = at({});
    const placement = (): WorkerPlacement => {
      // Every second read opens a take: the counts before it.
      if (reads++ % 2 === 0) take++;
      else {
        const t = takes[take]!;
        counts = at({
          joins: counts.joins + 10,
          joinsOnCaller: counts.joinsOnCaller! + 10 * t.onCaller,
          chunks: counts.chunks + 100,
          workerChunks: counts.workerChunks + 100 * t.worker,
        });
      }
      return counts;
    };
    const t = timeRuns(() => undefined, 2, false, placement);
    expect(RETAKES).toBe(2);
    expect(t.retakes).toBe(2);
    expect(t.onCaller).toBe(0);
    expect(t.workerChunks).toBe(0.5);
    expect(take).toBe(2);
  });

  it('a timing whose workers fell short of RETAKE_HELP of their share is taken again, yet counts as helped', () => {
    // Workers at 35% of the chunks in every take (70% of their even share at two threads): another load on their core.
    const short = { onCaller: 0, workerChunks: 0.35 };
    expect(crowding(short, 2)).toBe(0);
    expect(crowding(short, 2, RETAKE_HELP)).toBeCloseTo(0.3);
    expect(crowding({ onCaller: 0, workerChunks: 0.5 * RETAKE_HELP }, 2, RETAKE_HELP)).toBe(0);
    let n = 0;
    const t = timeRuns(
      () => void n++,
      2,
      false,
      () => at({ joins: n, chunks: 20 * n, workerChunks: 7 * n }),
    );
    expect(t.retakes).toBe(RETAKES);
    expect(t.workerChunks).toBeCloseTo(0.35, 2);
    // Every take short of RETAKE_HELP, but none crowded by MIN_HELP: the fit keeps it.
    expect(crowdedLeftOut([{ threads: 1 }, { threads: 2, workersOnCaller: 0, workerChunks: 0.35 }]).size).toBe(0);
  });

  it('an uncrowded timing is kept at once; one thread and an unknown placement are never retaken', () => {
    let n = 0;
    const t = timeRuns(
      () => void n++,
      2,
      false,
      () => at({ joins: n, chunks: 2 * n, workerChunks: n }),
    );
    expect(t.retakes).toBe(0);
    expect(t.workerChunks).toBeCloseTo(0.5, 1);
    expect(
      timeRuns(
        () => void n++,
        2,
        false,
        () => undefined,
      ),
    ).toMatchObject({ retakes: 0, onCaller: null });
    expect(timeRuns(() => void n++, 1, false)).toMatchObject({ retakes: 0, onCaller: null, workerChunks: null });
  });

  it('the fit leaves out the timings still crowded, but not when every multi-thread timing was', () => {
    const rows = [
      { threads: 1 },
      { threads: 2, workersOnCaller: 0, workerChunks: 0.5 },
      { threads: 2, workersOnCaller: 1, workerChunks: 0.5 },
      { threads: 2, workerChunks: 0.05 },
    ];
    expect([...crowdedLeftOut(rows)]).toEqual([rows[2], rows[3]]);
    expect(crowdedLeftOut([rows[0]!, rows[2]!, rows[3]!]).size).toBe(0);
  });

  it('the speed probe: the faster reading around a timing, and speeds relative to the median reading', () => {
    let calls = 0;
    let sink = 0;
    // Some work a call, so that no reading is 0.
    const probe = new SpeedProbe(() => {
      calls++;
      for (let i = 0; i < 20_000; i++) sink += Math.sqrt(i);
    });
    const t = probe.around(() => ({ ms: 1 }));
    // An untimed call and five timed ones a reading, two readings.
    expect(calls).toBe(12);
    expect(t.ms).toBe(1);
    expect(t.probeMs).toBeGreaterThan(0);
    const m = probe.median();
    expect(m).toBeGreaterThan(0);
    expect(sink).toBeGreaterThan(0);
    expect(probe.speed(2 * m)).toBeCloseTo(0.5);
    expect(probe.speed(m / 2)).toBeCloseTo(2);
    expect(new SpeedProbe(() => undefined).median()).toBeNaN();
  });
});
