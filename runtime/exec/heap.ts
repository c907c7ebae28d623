/**
 * First-fit allocation of byte ranges in one linear memory (the wasm
 * backend's WebAssembly.Memory): 16-byte aligned blocks, freed blocks merged
 * with their free neighbours, the memory grown by the caller when nothing
 * fits. Address 0 stays unused so that no buffer is a null pointer.
 */
const ALIGN = 16;

export class Heap {
  /** Free blocks [offset, offset + size), sorted by offset, never adjacent. */
  private readonly holes: { offset: number; size: number }[] = [];
  private readonly used = new Map<number, number>();
  private top = ALIGN;

  /** The end of the highest block ever handed out: the memory must be at least this large. */
  get end(): number {
    return this.top;
  }

  alloc(bytes: number): number {
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    const i = this.holes.findIndex((h) => h.size >= size);
    let offset: number;
    if (i >= 0) {
      const h = this.holes[i]!;
      offset = h.offset;
      if (h.size === size) this.holes.splice(i, 1);
      else this.holes[i] = { offset: h.offset + size, size: h.size - size };
    } else {
      offset = this.top;
      this.top += size;
    }
    this.used.set(offset, size);
    return offset;
  }

  free(offset: number): void {
    const size = this.used.get(offset);
    if (size === undefined) throw new Error(`heap: free of ${offset}, which is not allocated`);
    this.used.delete(offset);
    let at = this.holes.findIndex((h) => h.offset > offset);
    if (at < 0) at = this.holes.length;
    this.holes.splice(at, 0, { offset, size });
    // Merge with the next, then the previous hole.
    const cur = this.holes[at]!;
    const next = this.holes[at + 1];
    if (next && cur.offset + cur.size === next.offset) {
      cur.size += next.size;
      this.holes.splice(at + 1, 1);
    }
    const prev = this.holes[at - 1];
    if (prev && prev.offset + prev.size === cur.offset) {
      prev.size += cur.size;
      this.holes.splice(at, 1);
    }
    // A hole at the top returns to the unallocated tail.
    const last = this.holes[this.holes.length - 1];
    if (last && last.offset + last.size === this.top) {
      this.top = last.offset;
      this.holes.pop();
    }
  }

  /** Bytes handed out and not freed. */
  get live(): number {
    let n = 0;
    for (const s of this.used.values()) n += s;
    return n;
  }
}
