import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatFieldErrors, type FieldError } from './field.js';

describe('formatFieldErrors', () => {
  const cases: { name: string; errors: FieldError[]; want: string }[] = [
    { name: 'none', errors: [], want: '' },
    { name: 'one', errors: [{ field: 'spec.containers[0].name', message: 'Required value' }], want: 'spec.containers[0].name: Required value' },
    {
      name: 'several, on one line',
      errors: [
        { field: 'spec.containers[0].name', message: 'Required value' },
        { field: 'spec.restartPolicy', message: 'Unsupported value: "x": supported values: "Always"' },
      ],
      want: 'spec.containers[0].name: Required value; spec.restartPolicy: Unsupported value: "x": supported values: "Always"',
    },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(formatFieldErrors(tc.errors), tc.want));
});
