/**
 * The generated C++ guards (<prog>_dispatch.h) compiled with g++ pick the
 * same partition as the guard tree, and agree on the range check, for every
 * training sample and for inputs outside the ranges. Skipped without g++.
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
import { buildGuards, featureRecord, outOfRange, sampleBindings, walkTree } from '../../runtime/guards/index.js';
import { gcnBinding, gcnSpec, graph, system } from '../guards/fixtures.js';
import { optimised } from '../helpers/compile.js';
import { example } from '../helpers/cli.js';
import { goal } from '../helpers/goal.js';

const HAVE_GXX = spawnSync('g++', ['--version']).status === 0;
const dir = mkdtempSync(join(tmpdir(), 'dype-dispatch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec = gcnSpec();
const samples = sampleBindings(['cora.cites', 'jazz.mtx', 'ca-GrQc.mtx', 'bcsstk13.mtx'].map((g) => gcnBinding(graph(g), 32, 32, 16)), { perProfile: 15, shapeDims: { A: ['n', 'n'] }, ranges: { 'dim.f': [16, 128] } });
const plan = buildGuards(spec, system('paper-1g1f'), samples, goal('throughput'));
const kernel = optimised(readFileSync(example('gcn.dy'), 'utf8')).kernels[0]!;
const manifest = wasmManifest(lowerKernelsPass.run({ kernels: [kernel] }).kernels[0]!, [], true);
// Outside the ranges: a much larger graph and a wider layer.
const probes = [...samples, gcnBinding(graph('karate.mtx'), 32, 32, 16), gcnBinding(graph('cora.cites'), 512, 32, 16)];

describe.skipIf(!HAVE_GXX)('<prog>_dispatch.h', () => {
  it('compiles with g++ -std=c++11 -Wall -Werror and agrees with the guard tree and the ranges', () => {
    const header = emitDispatchHeader('gcn', 'examples/gcn.dy', [{ kernel, spec, plan }]);
    writeFileSync(join(dir, 'gcn_dispatch.h'), header);
    const fields = [...header.matchAll(/^ {2}double (\w+); \/\* (\S+) \*\/$/gm)].map((m) => ({ c: m[1]!, key: m[2]! }));
    expect(fields.length).toBeGreaterThan(3);
    const rows = probes.map((b) => {
      const f = featureRecord(b);
      return `{${fields.map(({ key }) => (f[key] ?? 0).toPrecision(17)).join(', ')}}`;
    });
    const main = `#include <cstdio>\n#include "gcn_dispatch.h"\nstatic const double rows[][${fields.length}] = {\n${rows.join(',\n')}\n};\nint main() {\n  for (unsigned i = 0; i < sizeof rows / sizeof rows[0]; i++) {\n    gcn_gcn_features f;\n${fields.map(({ c }, j) => `    f.${c} = rows[i][${j}];\n`).join('')}    std::printf("%d %d\\n", gcn_gcn_dispatch(f), gcn_gcn_in_range(f) ? 1 : 0);\n  }\n  std::printf("%d %s\\n", gcn_gcn_partition_count, gcn_gcn_partition_labels[0]);\n  return 0;\n}\n`;
    writeFileSync(join(dir, 'main.cpp'), main);
    execFileSync('g++', ['-std=c++11', '-Wall', '-Wextra', '-Werror', '-O1', '-o', join(dir, 'main'), join(dir, 'main.cpp')], { cwd: dir });
    const out = execFileSync(join(dir, 'main'), { encoding: 'utf8' }).trim().split('\n');
    const last = out.pop()!;
    expect(last).toBe(`${plan.partitions.length} ${plan.partitions[0]!.label}`);
    const expected = probes.map((b) => {
      const f = featureRecord(b);
      return `${walkTree(plan.tree, (k) => f[k]).leaf} ${outOfRange(plan.ranges, (k) => f[k]).length === 0 ? 1 : 0}`;
    });
    expect(out).toEqual(expected);
    expect(out.slice(-2).every((l) => l.endsWith(' 0'))).toBe(true);
  });
});

describe('guards of one partition', () => {
  it('compile cleanly in C++ (g++ -Wextra -Werror) and mark the unused argument used in TypeScript (noUnusedParameters)', () => {
    const one = { ...plan, partitions: [plan.partitions[0]!], tree: { leaf: 0 } };
    const ts = emitRuntimeTs('gcn', 'examples/gcn.dy', 'test', [{ kernel, spec, plan: one, manifest }], 'dype/runtime');
    expect(ts).toMatch(/export function gcnGuard\(f: GuardFeatures\): number \{\n\s+void f;\n\s+return 0;\n\}/);
    if (!HAVE_GXX) return;
    writeFileSync(join(dir, 'one_dispatch.h'), emitDispatchHeader('one', 'one.dy', [{ kernel, spec, plan: one }]));
    writeFileSync(join(dir, 'one.cpp'), '#include "one_dispatch.h"\nint main() { one_gcn_features f = {}; return one_gcn_dispatch(f); }\n');
    execFileSync('g++', ['-std=c++11', '-Wall', '-Wextra', '-Werror', '-o', join(dir, 'one'), join(dir, 'one.cpp')], { cwd: dir });
  });
});

describe('<prog>.runtime.ts guards', () => {
  it('are straight-line code that picks what the tree picks', () => {
    const ts = emitRuntimeTs('gcn', 'examples/gcn.dy', 'test', [{ kernel, spec, plan, manifest }], '../runtime/engine/index.js');
    const body = /export function gcnGuard\(f: GuardFeatures\): number \{\n([\s\S]*?)\n\}\n/.exec(ts)![1]!;
    expect(body).not.toMatch(/for|while|=>/);
    const guard = new Function('f', body) as (f: Record<string, number>) => number;
    for (const b of probes) {
      const f = featureRecord(b);
      expect(guard(f)).toBe(walkTree(plan.tree, (k) => f[k]).leaf);
    }
  });
});
