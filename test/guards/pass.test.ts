/**
 * The build-guards pass: builds guards for every objective (the goal's is
 * the initial one), records on each op the instances it runs on in each
 * partition of the objectives' table, the annotated IR verifies and
 * round-trips through the text form; the registered instance (no data)
 * explains that it needs profiles (DY6300).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiagnosticError } from '../../ir/diagnostics.js';
import { printModule } from '../../ir/printer.js';
import { parseModule } from '../../ir/text-parser.js';
import { buildGuardsPass } from '../../passes/build-guards.js';
import { OBJECTIVES, partitionTable } from '../../runtime/guards/objectives.js';
import { getPass, runPipeline } from '../../passes/index.js';
import { implsOf, optimised } from '../helpers/compile.js';
import { gcnBinding, graph, root, system } from './fixtures.js';
import { goal } from '../helpers/goal.js';

const module = optimised(readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8'));

describe('build-guards pass', () => {
  it('builds guards for every objective and annotates every op with its instances per partition of their table; the IR verifies and round-trips', () => {
    const pass = buildGuardsPass({
      system: system('paper-1g1f'),
      profiles: new Map([
        ['gcn', ['cora.cites', 'jazz.mtx', 'bcsstk13.mtx'].map((g) => gcnBinding(graph(g), 32, 32, 16))],
      ]),
      ...goal('energy'),
      shapeDims: new Map([['gcn', { A: ['n', 'n'] as [string, string] }]]),
      sampling: { perProfile: 10 },
      impls: new Map([['gcn', implsOf(readFileSync(join(root, 'examples', 'gcn.dy'), 'utf8'), 'gcn.dy')]]),
    });
    const out = runPipeline(module, { passes: [pass] });
    const plans = pass.plans.get('gcn')!;
    expect(pass.objective).toBe('energy');
    expect(pass.description).toMatch(/objectives energy, throughput, latency; initial energy/);
    for (const o of OBJECTIVES) {
      expect(plans[o]!.objective).toBe(o);
      expect(plans[o]!.partitions.length).toBeGreaterThan(0);
      expect(plans[o]!.energyScope).toBe(plans.energy!.energyScope);
    }
    const table = partitionTable(plans, 'energy');
    // The initial objective's partitions keep their ids; no two partitions of the table are the same stages.
    expect(table.ids.energy).toEqual(plans.energy!.partitions.map((p) => p.id));
    expect(new Set(table.partitions.map((p) => p.key)).size).toBe(table.partitions.length);
    const k = out.kernels[0]!;
    for (const op of k.body) {
      const g = op.attrs['guards'] as string[];
      expect(g).toHaveLength(table.partitions.length);
      g.forEach((s, i) => expect(s).toMatch(new RegExp(`^p${i}:(cpu|gpu|fpga)\\d+(\\+(cpu|gpu|fpga)\\d+)*$`)));
    }
    const text = printModule(out);
    expect(text).toMatch(/guards = \["p0:/);
    expect(printModule(parseModule(text))).toBe(text);
  });

  it('is registered by name; without profiles it says how to give them', () => {
    const p = getPass('build-guards')!;
    expect(p.description).toMatch(/profile/);
    expect(() => runPipeline(module, { passes: ['build-guards'] })).toThrow(DiagnosticError);
    try {
      runPipeline(module, { passes: ['build-guards'] });
    } catch (e) {
      expect((e as DiagnosticError).diagnostics[0]!.code).toBe('DY6300');
    }
  });
});
