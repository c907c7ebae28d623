/**
 * Legality checks of a kernel view model before anything is emitted, each
 * failure a diagnostic naming the kernel (DY6201-DY6206, DY6208):
 *   - every stream has exactly one producer and one consumer (DATAFLOW);
 *   - an array's partition factor equals the unroll factor of the loops that
 *     index the partitioned dimension (else the unrolled accesses conflict
 *     on one memory port, or resources are wasted);
 *   - no on-chip array of run-time size (dynamic allocation);
 *   - no function that reaches itself through calls (recursion);
 *   - every loop with a data-dependent bound carries a trip-count bound;
 *   - every m_axi argument's HBM bank lies within the platform's range;
 *   - no two arguments or arrays share a C++ name;
 * and of a whole project (DY6207): its kernel instances, FIFOs and the
 * platform's shell fit the card's resources.
 */
import { DiagnosticError, fileSpan, makeDiagnostic, type DiagCode, type Diagnostic } from '../../ir/diagnostics.js';
import { fpgaProjectResources, resourceOverflow } from '../../runtime/plan/fpga-designs.js';
import type { KernelVM, Platform } from './view-model.js';

export function legalityProblems(vm: KernelVM, platform: Platform, file = '<hls>'): Diagnostic[] {
  const out: Diagnostic[] = [];
  const add = (code: DiagCode, msg: string): void =>
    void out.push(
      makeDiagnostic(code, `HLS kernel ${vm.name} (kernel ${vm.kernel}, op ${vm.op}): ${msg}`, fileSpan(file)),
    );
  for (const s of vm.streams) {
    if (s.producers.length !== 1 || s.consumers.length !== 1)
      add(
        'DY6201',
        `stream '${s.name}' has ${s.producers.length} producer(s) [${s.producers.join(', ')}] and ${s.consumers.length} consumer(s) [${s.consumers.join(', ')}]; expected exactly one of each`,
      );
  }
  for (const a of vm.arrays) {
    for (const p of a.partitions) {
      const extent = a.dims[p.dim - 1];
      const factor = p.kind === 'complete' ? extent : p.factor;
      for (const u of a.unrolledBy.filter((x) => x.dim === p.dim)) {
        if (typeof factor !== 'number' || factor !== u.factor)
          add(
            'DY6202',
            `array '${a.name}' dimension ${p.dim} is partitioned ${p.kind} by ${factor} but a loop unrolled ${u.factor} times indexes it; expected the same factor`,
          );
      }
    }
    const unpartitioned = a.unrolledBy.filter((u) => u.factor > 1 && !a.partitions.some((p) => p.dim === u.dim));
    for (const u of unpartitioned)
      add(
        'DY6202',
        `array '${a.name}' dimension ${u.dim} is indexed by a loop unrolled ${u.factor} times but not partitioned`,
      );
    const dyn = a.dims.filter((d) => typeof d !== 'number');
    if (dyn.length > 0)
      add(
        'DY6203',
        `array '${a.name}' has the run-time extent ${dyn.join(', ')}; on-chip arrays need sizes known at synthesis`,
      );
  }
  const calls = new Map(vm.functions.map((f) => [f.name, f.calls]));
  for (const f of vm.functions) {
    // Depth-first search from f for a path back to f.
    const seen = new Set<string>();
    const stack = [...f.calls];
    while (stack.length > 0) {
      const g = stack.pop()!;
      if (g === f.name) {
        add(
          'DY6204',
          `function '${f.name}' calls itself (directly or through others); HLS cannot synthesise recursion`,
        );
        break;
      }
      if (seen.has(g)) continue;
      seen.add(g);
      stack.push(...(calls.get(g) ?? []));
    }
  }
  for (const l of vm.loops) {
    if (l.dataDependent && !l.tripcount)
      add('DY6205', `loop '${l.label}' has a data-dependent bound and no trip-count bound (LOOP_TRIPCOUNT)`);
  }
  // The program's names are written with '.' as '_' (A.vals as A_vals): two of them may then be one C++ name.
  const declared = new Map<string, string>();
  // The launch function's parameters (every loop-IR buffer and size, hls-templates/host/launch.h.hbs) apart: a design
  // packs some buffers into other kernel arguments, so a collision may show in one list and not the other.
  const launchNames = vm.launch.params.map((p) => p.split(/[\s*&]+/).pop()!);
  const dup = launchNames.find((n, i) => launchNames.indexOf(n) !== i);
  if (dup !== undefined)
    add(
      'DY6208',
      `the launch function's parameter '${dup}' would be declared twice: two of the program's names differ only in '.' against '_' (as A.vals, a sparse input's values, and a tensor A_vals); rename one`,
    );
  for (const [name, what] of [
    ...vm.args.map((a) => [a.name, 'argument'] as const),
    ...vm.arrays.map((a) => [a.name, 'array'] as const),
  ]) {
    const before = declared.get(name);
    if (before !== undefined)
      add(
        'DY6208',
        `the ${before} and the ${what} '${name}' would be the same C++ identifier: two of the program's names differ only in '.' against '_' (as A.vals, a sparse input's values, and a tensor A_vals); rename one`,
      );
    else declared.set(name, what);
  }
  for (const a of vm.args) {
    if (a.kind !== 'ptr') continue;
    if (a.bank === undefined || !Number.isInteger(a.bank) || a.bank < 0 || a.bank >= platform.hbmBanks)
      add(
        'DY6206',
        `argument '${a.name}' is mapped to HBM bank ${a.bank ?? '(none)'}; platform ${platform.name} has banks 0..${platform.hbmBanks - 1}`,
      );
  }
  return out;
}

/** Throws a DiagnosticError listing every problem of the design. */
export function checkDesign(vm: KernelVM, platform: Platform, file?: string): void {
  const ps = legalityProblems(vm, platform, file);
  if (ps.length > 0) throw new DiagnosticError(ps);
}

/** DY6207 when the project's kernels (one instance each, FIFOs included) and the shell exceed the card. */
export function projectFitProblems(vms: readonly KernelVM[], platform: Platform, file = '<hls>'): Diagnostic[] {
  const use = fpgaProjectResources(vms.map((v) => v.estimates.resources));
  const over = resourceOverflow(use, platform.resources);
  if (!over) return [];
  const each = vms.map((v) => `${v.name} ${v.estimates.resources[over.kind]}`).join(', ');
  return [
    makeDiagnostic(
      'DY6207',
      `HLS project does not fit ${platform.name}: its kernels and the platform shell need ${over.need} ${over.kind.toUpperCase()}, the card has ${over.have} (kernels: ${each}; shell included); expected at most ${over.have}`,
      fileSpan(file),
    ),
  ];
}
