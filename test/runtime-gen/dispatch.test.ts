/**
 * The generated C++ guards (<prog>_dispatch.h) compiled with g++ pick, for
 * every objective, the same partition (as a table id) as that objective's
 * guard tree, through the per-objective functions and the one taking the
 * objective enum (whose default is the compile's objective), and agree on
 * the range check, for every training sample and for inputs outside the
 * ranges. The generated TypeScript guards of every objective do the same.
 * Skipped without g++.
 */
import { wasmManifest } from '../../codegen/wasm/emit.js';
import { lowerKernelsPass } from '../../passes/lower-kernels.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { emitDispatchHeader } from '../../codegen/runtime/emit-cpp.js';
import { emitRuntimeTs } from '../../codegen/runtime/emit-ts.js';
import {
  buildGuards,
  featureRecord,
  OBJECTIVES,
  partitionTable,
  sampleBindings,
  walkTree,
  type GuardPlans,
} from '../../runtime/guards/index.js';
import { guardStep } from '../../runtime/guards/step.js';
import { gcnBinding, gcnSpec, graph, system } from '../guards/fixtures.js';
import { optimised } from '../helpers/compile.js';
import { example } from '../helpers/cli.js';
import { goal } from '../helpers/goal.js';

const HAVE_GXX = spawnSync('g++', ['--version']).status === 0;
/** What a native host may build the header with: every warning that flags a likely bug, as errors. */
const STRICT = ['-std=c++11', '-Wall', '-Wextra', '-Wpedantic', '-Wshadow', '-Wconversion', '-Werror'];
const dir = mkdtempSync(join(tmpdir(), 'dype-dispatch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec = gcnSpec();
const sys = system('paper-1g1f');
const samples = sampleBindings(
  ['cora.cites', 'jazz.mtx', 'ca-GrQc.mtx', 'bcsstk13.mtx'].map((g) => gcnBinding(graph(g), 32, 32, 16)),
  { perProfile: 15, shapeDims: { A: ['n', 'n'] }, ranges: { 'dim.f': [16, 128] } },
);
const plans: GuardPlans = Object.fromEntries(OBJECTIVES.map((o) => [o, buildGuards(spec, sys, samples, goal(o))]));
const plan = plans.throughput!;
// The runtime starts with energy: its partitions come first in the table.
const INITIAL = 'energy';
const table = partitionTable(plans, INITIAL);
const kernel = optimised(readFileSync(example('gcn.dy'), 'utf8')).kernels[0]!;
const manifest = wasmManifest(lowerKernelsPass.run({ kernels: [kernel] }).kernels[0]!, [], true);
// Outside the ranges: a much larger graph and a wider layer.
const probes = [...samples, gcnBinding(graph('karate.mtx'), 32, 32, 16), gcnBinding(graph('cora.cites'), 512, 32, 16)];
/** What each objective's guard tree picks, as a table id, and whether the probe is in its ranges as the runtime's compiled step checks them (the reached leaf's). */
const expected = (o: (typeof OBJECTIVES)[number]): string[] =>
  probes.map((b) => {
    const f = featureRecord(b);
    return `${table.ids[o]![walkTree(plans[o]!.tree, (k) => f[k]).leaf]} ${guardStep(plans[o]!)(b) >= 0 ? 1 : 0}`;
  });

describe('the partition table of every objective', () => {
  it('has each objective\u2019s partitions once by stage choices, the initial objective\u2019s first with their own ids', () => {
    expect(table.objectives).toEqual(['energy', 'throughput', 'latency']);
    expect(table.ids.energy).toEqual(plans.energy!.partitions.map((_, i) => i));
    expect(new Set(table.partitions.map((p) => p.key)).size).toBe(table.partitions.length);
    for (const o of OBJECTIVES)
      plans[o]!.partitions.forEach((p, i) => {
        const t = table.partitions[table.ids[o]![i]!]!;
        expect(t.choices).toEqual(p.choices);
        expect(t.objectives).toContain(o);
        // Fallbacks as this objective ranks them, in table ids.
        expect(t.fallbacksBy[o]).toEqual(p.fallbacks.map((j) => table.ids[o]![j]!));
      });
    // Guards this small share partitions across objectives (at least one is picked by two).
    expect(table.partitions.length).toBeLessThan(OBJECTIVES.reduce((a, o) => a + plans[o]!.partitions.length, 0));
  });
});

describe.skipIf(!HAVE_GXX)('<prog>_dispatch.h', () => {
  it('compiles warning-free (g++ -std=c++11 STRICT), links into two translation units, and agrees with each objective\u2019s guard tree and ranges', () => {
    const header = emitDispatchHeader('gcn', 'examples/gcn.dy', [{ kernel, spec, objective: INITIAL, plans }]);
    writeFileSync(join(dir, 'gcn_dispatch.h'), header);
    expect(header).toMatch(
      /enum gcn_objective : int \{\n {2}gcn_objective_throughput = 0,\n {2}gcn_objective_energy = 1,\n {2}gcn_objective_latency = 2\n\};/,
    );
    expect(header).toMatch(/static const gcn_objective gcn_gcn_initial_objective = gcn_objective_energy;/);
    expect(header).toMatch(
      /inline int gcn_gcn_dispatch\(const gcn_gcn_features& f, gcn_objective o = gcn_gcn_initial_objective\)/,
    );
    const fields = [...header.matchAll(/^ {2}double (\w+); \/\* (\S+) \*\/$/gm)].map((m) => ({ c: m[1]!, key: m[2]! }));
    expect(fields.length).toBeGreaterThan(3);
    const rows = probes.map((b) => {
      const f = featureRecord(b);
      return `{${fields.map(({ key }) => (f[key] ?? 0).toPrecision(17)).join(', ')}}`;
    });
    // Per probe: each objective's own functions, then the enum-taking ones, then the default (the initial objective).
    const perObjective = OBJECTIVES.map(
      (o) =>
        `    std::printf("%d %d|%d %d;", gcn_gcn_dispatch_${o}(f), gcn_gcn_in_range_${o}(f) ? 1 : 0, gcn_gcn_dispatch(f, gcn_objective_${o}), gcn_gcn_in_range(f, gcn_objective_${o}) ? 1 : 0);\n`,
    ).join('');
    const main = `#include <cstdio>\n#include "gcn_dispatch.h"\nint other_dispatch(const gcn_gcn_features& f);\nstatic const double rows[][${fields.length}] = {\n${rows.join(',\n')}\n};\nint main() {\n  for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {\n    gcn_gcn_features f;\n${fields.map(({ c }, j) => `    f.${c} = rows[i][${j}];\n`).join('')}${perObjective}    std::printf("%d %d\\n", gcn_gcn_dispatch(f), gcn_gcn_in_range(f) ? 1 : 0);\n    if (other_dispatch(f) != gcn_gcn_dispatch_latency(f)) return 1;\n    for (int o = -1; o < 8; o += 4) if (gcn_gcn_dispatch(f, static_cast<gcn_objective>(o)) != -1 || gcn_gcn_in_range(f, static_cast<gcn_objective>(o))) return 2;\n  }\n  std::printf("%d %s\\n", gcn_gcn_partition_count, gcn_gcn_partition_labels[gcn_gcn_partition_count - 1]);\n  return 0;\n}\n`;
    writeFileSync(join(dir, 'main.cpp'), main);
    // A second translation unit including it (twice): a host links the header into several, which only inline
    // functions and internal constants allow.
    writeFileSync(
      join(dir, 'other.cpp'),
      '#include "gcn_dispatch.h"\n#include "gcn_dispatch.h"\nint other_dispatch(const gcn_gcn_features& f);\nint other_dispatch(const gcn_gcn_features& f) { return gcn_gcn_dispatch(f, gcn_objective_latency); }\n',
    );
    execFileSync('g++', [...STRICT, '-O1', '-o', join(dir, 'main'), join(dir, 'main.cpp'), join(dir, 'other.cpp')], {
      cwd: dir,
    });
    const out = execFileSync(join(dir, 'main'), { encoding: 'utf8' }).trim().split('\n');
    const last = out.pop()!;
    expect(last).toBe(`${table.partitions.length} ${table.partitions[table.partitions.length - 1]!.label}`);
    const want = OBJECTIVES.map(expected);
    expect(out).toEqual(
      probes.map(
        (_, i) =>
          `${OBJECTIVES.map((_, j) => `${want[j]![i]}|${want[j]![i]};`).join('')}${want[OBJECTIVES.indexOf(INITIAL)]![i]}`,
      ),
    );
    expect(want.every((w) => w.slice(-2).every((l) => l.endsWith(' 0')))).toBe(true);
    // The objectives' guards do not all agree: the header really has three different sets.
    expect(new Set(want.map((w) => w.join())).size).toBeGreaterThan(1);
  });
});

describe('guards of one partition', () => {
  it('compile cleanly in C++ (g++ -Wextra -Werror), give -1 and out of range for a value outside the enum, and mark the unused argument used in TypeScript (noUnusedParameters)', () => {
    const one = { throughput: { ...plan, partitions: [plan.partitions[0]!], tree: { leaf: 0 } } };
    const ts = emitRuntimeTs(
      'gcn',
      'examples/gcn.dy',
      'test',
      [{ kernel, spec, objective: 'throughput', plans: one, manifest }],
      'dype/runtime',
    );
    expect(ts).toMatch(
      /export function gcnGuard_throughput\(f: GuardFeatures\): number \{\n\s+void f;\n\s+return 0;\n\}/,
    );
    expect(ts).not.toMatch(/gcnGuard_energy/);
    if (!HAVE_GXX) return;
    const header = emitDispatchHeader('one', 'one.dy', [{ kernel, spec, objective: 'throughput', plans: one }]);
    expect(header).toMatch(/no guards were built for energy or latency: there the throughput guards pick/);
    writeFileSync(join(dir, 'one_dispatch.h'), header);
    writeFileSync(
      join(dir, 'one.cpp'),
      '#include "one_dispatch.h"\nint main() { one_gcn_features f = {}; const one_objective none = static_cast<one_objective>(3); return one_gcn_dispatch(f) + one_gcn_dispatch(f, one_objective_latency) + (one_gcn_in_range(f, one_objective_energy) == one_gcn_in_range_throughput(f) ? 0 : 1) + (one_gcn_dispatch(f, none) == -1 ? 0 : 2) + (one_gcn_in_range(f, none) ? 4 : 0); }\n',
    );
    execFileSync('g++', ['-std=c++11', '-Wall', '-Wextra', '-Werror', '-o', join(dir, 'one'), join(dir, 'one.cpp')], {
      cwd: dir,
    });
    expect(spawnSync(join(dir, 'one')).status).toBe(0);
  });
});

describe.skipIf(!HAVE_GXX)('the header\u2019s range check', () => {
  it('checks, as the runtime does, tier 0 always and only the row statistics the reached leaf lists, widened alike', () => {
    // One partition whose pick holds however the rows are laid out (checks: none), and one listing the row cv.
    const ranges = plan.ranges;
    const cv = ranges['A.rowLenCv']!;
    const rows = ranges['A.rows']!;
    const tier0Only = { throughput: { ...plan, partitions: [plan.partitions[0]!], tree: { leaf: 0, checks: [] } } };
    const cvChecked = {
      throughput: { ...plan, partitions: [plan.partitions[0]!], tree: { leaf: 0, checks: ['A.rowLenCv'] } },
    };
    const run = (name: string, plans1: GuardPlans, sets: Record<string, number>): number => {
      const header = emitDispatchHeader(name, `${name}.dy`, [{ kernel, spec, objective: 'throughput', plans: plans1 }]);
      writeFileSync(join(dir, `${name}_dispatch.h`), header);
      const fields = [...header.matchAll(/^ {2}double (\w+); \/\* (\S+) \*\/$/gm)].map((m) => ({
        c: m[1]!,
        key: m[2]!,
      }));
      // Every feature at its range's middle (or 1), then the ones under test.
      const mid = (key: string): number => (ranges[key] ? (ranges[key][0] + ranges[key][1]) / 2 : 1);
      const body = fields.map(({ c, key }) => `  f.${c} = ${(sets[key] ?? mid(key)).toPrecision(17)};\n`).join('');
      writeFileSync(
        join(dir, `${name}.cpp`),
        `#include "${name}_dispatch.h"\nint main() {\n  ${name}_gcn_features f;\n${body}  return ${name}_gcn_in_range(f) ? 1 : 0;\n}\n`,
      );
      execFileSync(
        'g++',
        ['-std=c++11', '-Wall', '-Wextra', '-Werror', '-o', join(dir, name), join(dir, `${name}.cpp`)],
        {
          cwd: dir,
        },
      );
      return spawnSync(join(dir, name)).status!;
    };
    const farCv = { 'A.rowLenCv': cv[1] * 10 + 1 };
    // A cv far outside: the tier-0-only leaf keeps its pick, the leaf listing cv re-plans; the runtime's step agrees.
    expect(run('t0', tier0Only, farCv)).toBe(1);
    expect(run('cv', cvChecked, farCv)).toBe(0);
    // A row count outside is out at either leaf; just inside the widened bound is in.
    expect(run('t0rows', tier0Only, { 'A.rows': rows[1] * 2 + 1 })).toBe(0);
    expect(run('t0edge', tier0Only, { 'A.rows': rows[1] * (1 + 1e-10) })).toBe(1);
    // The runtime's compiled step on cora with that cv (every other feature inside the ranges): the same verdicts.
    const b0 = gcnBinding(graph('cora.cites'), 32, 32, 16);
    const b = { ...b0, sparse: new Map([['A', { ...b0.sparse.get('A')!, rowLenCv: farCv['A.rowLenCv'] }]]) };
    expect(guardStep(tier0Only.throughput)(b)).toBe(0);
    expect(guardStep(cvChecked.throughput)(b)).toBe(-1);
  });

  it('compiles where a bound widens to infinity (a profile value near the largest double), and checks it as the runtime does', () => {
    // Widened by RANGE_SLACK, this top overflows: the header once printed it as `Infinity`, which C++ does not know.
    const top = Number.MAX_VALUE;
    const wide = {
      throughput: {
        ...plan,
        partitions: [plan.partitions[0]!],
        tree: { leaf: 0, checks: [] },
        ranges: { ...plan.ranges, 'dim.f': [16, top] as [number, number] },
      },
    };
    const header = emitDispatchHeader('wide', 'wide.dy', [{ kernel, spec, objective: 'throughput', plans: wide }]);
    writeFileSync(join(dir, 'wide_dispatch.h'), header);
    const fields = [...header.matchAll(/^ {2}double (\w+); \/\* (\S+) \*\/$/gm)].map((m) => ({ c: m[1]!, key: m[2]! }));
    const mid = (key: string): number => (plan.ranges[key] ? (plan.ranges[key][0] + plan.ranges[key][1]) / 2 : 1);
    const body = fields.map(({ c, key }) => `  f.${c} = ${mid(key).toPrecision(17)};\n`).join('');
    // Bit k: in range with f = 32, the largest double, +inf, NaN.
    writeFileSync(
      join(dir, 'wide.cpp'),
      `#include <limits>\n#include "wide_dispatch.h"\nint main() {\n  wide_gcn_features f;\n${body}  const double widths[] = {32, std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};\n  int bits = 0;\n  for (int k = 0; k < 4; k++) {\n    f.dim_f = widths[k];\n    bits |= (wide_gcn_in_range(f) ? 1 : 0) << k;\n  }\n  return bits;\n}\n`,
    );
    execFileSync('g++', [...STRICT, '-o', join(dir, 'wide'), join(dir, 'wide.cpp')], { cwd: dir });
    // NaN is out (the header's rule); +inf is in, as the runtime's step takes an unbounded top.
    expect(spawnSync(join(dir, 'wide')).status).toBe(0b0111);
    const b0 = gcnBinding(graph('cora.cites'), 32, 32, 16);
    const at = (f: number): number => guardStep(wide.throughput)({ ...b0, dims: new Map([...b0.dims, ['f', f]]) });
    expect([32, top, Infinity].map(at)).toEqual([0, 0, 0]);
  });
});

describe('<prog>.runtime.ts guards', () => {
  it('are straight-line code per objective that picks what that objective\u2019s tree picks, as a table id', () => {
    const ts = emitRuntimeTs(
      'gcn',
      'examples/gcn.dy',
      'test',
      [{ kernel, spec, objective: INITIAL, plans, manifest }],
      '../runtime/engine/index.js',
    );
    expect(ts).toMatch(/objective: "energy",\n\s+guards: GCN_GUARDS,/);
    expect(ts).toMatch(
      /guard: \{ energy: gcnGuard_energy, throughput: gcnGuard_throughput, latency: gcnGuard_latency \}/,
    );
    expect(ts).toMatch(/setObjective\(o: Objective\): void;/);
    for (const o of OBJECTIVES) {
      const body = new RegExp(
        `export function gcnGuard_${o}\\(f: GuardFeatures\\): number \\{\\n([\\s\\S]*?)\\n\\}\\n`,
      ).exec(ts)![1]!;
      expect(body).not.toMatch(/for|while|=>/);
      const guard = new Function('f', body) as (f: Record<string, number>) => number;
      for (const b of probes) {
        const f = featureRecord(b);
        expect(guard(f), o).toBe(table.ids[o]![walkTree(plans[o]!.tree, (k) => f[k]).leaf]);
      }
    }
  });
});
