/**
 * The catalogue prices the launches and memsets a GPU schedule queues after
 * its first (QUEUED_AFTER_FIRST, runtime/catalogue/gpu.ts); this holds the
 * count against the generated CUDA stubs of every sparse op of the examples,
 * so a stub that gains or loses a launch fails here until the catalogue says so.
 */
import { describe, expect, it } from 'vitest';
import { emitCuda } from '../../codegen/cuda/emit.js';
import { QUEUED_AFTER_FIRST } from '../../runtime/catalogue/gpu.js';
import type { GpuImpl } from '../../runtime/catalogue/names.js';
import { exampleProgram } from '../cuda/helpers.js';

/** Each op stub of a program's .cu: its variant and the stream operations it queues (the scalar path of SpMM stubs). */
function stubs(program: string): { name: string; variant: GpuImpl; queued: number }[] {
  const files = emitCuda(exampleProgram(program));
  const cu = files.get(`${program}.cu`)!;
  const out: { name: string; variant: GpuImpl; queued: number }[] = [];
  for (const m of cu.matchAll(/^extern "C" int (dype_\w+_op\d+_(\w+))\(.*\{\n([\s\S]*?)^\}\n/gm)) {
    const variant = m[2]!.replace(/_/g, '-') as GpuImpl;
    if (!(variant in QUEUED_AFTER_FIRST)) continue;
    // A stub with a 16-byte vector path launches either it or the scalar one: count the scalar path.
    const launches = [...m[3]!.matchAll(/DY_LAUNCH\((\w+)/g)].filter((l) => !/_vec(_|$)/.test(l[1]!)).length;
    const memsets = [...m[3]!.matchAll(/cudaMemsetAsync\(/g)].length;
    out.push({ name: m[1]!, variant, queued: launches + memsets });
  }
  return out;
}

describe('queued launches of the GPU schedules', () => {
  for (const program of ['spmv', 'spmm', 'pagerank', 'sssp', 'gcn']) {
    it(`${program}: every sparse stub queues 1 + QUEUED_AFTER_FIRST operations`, () => {
      const found = stubs(program);
      expect(found.length).toBeGreaterThan(0);
      for (const s of found)
        expect({ stub: s.name, queued: s.queued }).toEqual({ stub: s.name, queued: 1 + QUEUED_AFTER_FIRST[s.variant] });
    });
  }
});
