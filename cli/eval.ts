/**
 * `dype eval [--quick] [--sensitivity [quick|full]] [-o DIR] [--json]`: runs
 * the evaluation suite (eval/), prints the paper's table (or the JSON object
 * of docs/CLI.md, `dype eval`), optionally the sensitivity of its figures to every
 * estimated or ranged parameter (eval/sensitivity.ts), and with -o writes
 * cases.csv, eval.json and report.html together (all or nothing).
 */
import { existsSync } from 'node:fs';
import { matricesDir } from '../eval/paths.js';
import { caseJson, casesCsv, summarise, summaryTable } from '../eval/summary.js';
import { runSuite } from '../eval/evaluate.js';
import { renderSuiteReport } from '../eval/report/suite.js';
import { runSensitivity, sensitivityTable, type Sensitivity } from '../eval/sensitivity.js';
import { usage } from './errors.js';
import { progress } from './progress.js';
import { checkProjectDestinations, writeProject } from './project-writer.js';

export interface EvalOptions {
  quick?: boolean;
  output?: string;
  json?: boolean;
  /** `true` (the flag alone): on the quick suite; or the suite's name. */
  sensitivity?: boolean | string;
}

/** What `-o` receives, checked before the suite runs and written after it. */
const EVAL_FILES = ['cases.csv', 'eval.json', 'report.html'];
const EVAL_WHAT = 'the evaluation results';

export function evalCommand(o: EvalOptions, stdout: (s: string) => void): void {
  if (o.output !== undefined && o.output.trim() === '') throw usage('-o expects a directory');
  const sensSuite =
    o.sensitivity === undefined || o.sensitivity === false
      ? undefined
      : o.sensitivity === true
        ? 'quick'
        : o.sensitivity;
  if (sensSuite !== undefined && sensSuite !== 'quick' && sensSuite !== 'full')
    throw usage(`--sensitivity expects quick or full, got ${JSON.stringify(sensSuite)}`);
  // Fail before minutes of work, not after.
  if (o.output !== undefined) checkProjectDestinations(o.output, EVAL_FILES, EVAL_WHAT);
  if (!existsSync(matricesDir()))
    process.stderr.write(`dype eval: warning: ${matricesDir()} is missing; the suite runs on generated inputs only\n`);
  let bar: ReturnType<typeof progress> | undefined;
  const results = runSuite({
    quick: o.quick === true,
    onProgress: (done, total) => {
      bar ??= progress('dype eval', total);
      bar.tick(done);
    },
  });
  bar?.done();
  const s = summarise(results);
  let sensitivity: Sensitivity | undefined;
  if (sensSuite !== undefined) {
    let sbar: ReturnType<typeof progress> | undefined;
    const quick = sensSuite === 'quick';
    sensitivity = runSensitivity({
      suite: sensSuite,
      quick,
      // The suite just run is the baseline when it is the same one.
      ...(quick === (o.quick === true) ? { baseline: results } : {}),
      onProgress: (done, total) => {
        sbar ??= progress('dype eval --sensitivity', total);
        sbar.tick(done);
      },
    });
    sbar?.done();
  }
  const command = `dype eval${o.quick ? ' --quick' : ''}${sensSuite !== undefined ? ` --sensitivity${sensSuite === 'quick' ? '' : ` ${sensSuite}`}` : ''}${o.output !== undefined ? ` -o ${o.output}` : ''}${o.json ? ' --json' : ''}`;
  // Every figure is the cost model's and the event simulation's: nothing of the suite runs on a device.
  const summary = { clock: 'modelled', ...s, ...(sensitivity ? { sensitivity } : {}) };
  if (o.output !== undefined) {
    const files = new Map<string, string>([
      ['cases.csv', casesCsv(results)],
      ['eval.json', JSON.stringify({ ...summary, command, case_results: results.map(caseJson) }, null, 2) + '\n'],
      ['report.html', renderSuiteReport(results, s, command, sensitivity)],
    ]);
    writeProject(o.output, files, [], EVAL_WHAT);
  }
  stdout(
    o.json
      ? JSON.stringify(summary, null, 2) + '\n'
      : summaryTable(s) + (sensitivity ? `\n${sensitivityTable(sensitivity)}` : ''),
  );
}
