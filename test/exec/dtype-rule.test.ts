/**
 * The rule for values of a dtype lives in the runtime (runtime/dtype.ts), which may not import the IR: the IR's
 * dtypes and the runtime's must stay the same set, or a new dtype would pass unchecked.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { DTYPES, type Dtype } from '../../ir/types.js';
import { dtypeMisfit, type ValueDtype } from '../../runtime/dtype.js';

describe('the dtypes of the IR and of the runtime', () => {
  it('are the same set, and the runtime rule judges every one', () => {
    expectTypeOf<Dtype>().toEqualTypeOf<ValueDtype>();
    for (const d of DTYPES) {
      expect(dtypeMisfit(d, 1), d).toBeUndefined();
      expect(dtypeMisfit(d, 0), d).toBeUndefined();
    }
    expect(DTYPES.filter((d) => dtypeMisfit(d, 0.5) !== undefined)).toEqual(['i32', 'i64', 'bool']);
  });
});
