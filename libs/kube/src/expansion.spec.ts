import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expand, mappingFuncFor } from './expansion.js';

describe('expand (third_party/forked/golang/expansion)', () => {
  const vars = new Map([
    ['VAR_A', 'A'],
    ['VAR_B', 'B'],
    ['VAR_C', 'C'],
    ['VAR_REF', '$(VAR_A)'],
    ['VAR_EMPTY', ''],
    ['my-var.x', 'dotted'],
    ['1ST', 'first'],
  ]);
  const mapping = mappingFuncFor(vars);
  // Cases from upstream's expand_test.go TestMapReference and TestExpand.
  const cases: { name: string; input: string; want: string }[] = [
    { name: 'whole string', input: '$(VAR_A)', want: 'A' },
    { name: 'repeat', input: '$(VAR_A)-$(VAR_A)', want: 'A-A' },
    { name: 'beginning', input: '$(VAR_A)-1', want: 'A-1' },
    { name: 'middle', input: '___$(VAR_B)___', want: '___B___' },
    { name: 'end', input: '___$(VAR_C)', want: '___C' },
    { name: 'compound', input: '$(VAR_A)_$(VAR_B)_$(VAR_C)', want: 'A_B_C' },
    { name: 'escape & expand', input: '$$(VAR_B)_$(VAR_A)', want: '$(VAR_B)_A' },
    { name: 'compound escape', input: '$$(VAR_A)_$$(VAR_B)', want: '$(VAR_A)_$(VAR_B)' },
    { name: 'mixed in escapes', input: 'f000-$$VAR_A', want: 'f000-$VAR_A' },
    { name: 'backslash escape ignored', input: 'foo\\$(VAR_C)bar', want: 'foo\\Cbar' },
    { name: 'backslash escape ignored, escaped', input: 'foo\\\\$(VAR_C)bar', want: 'foo\\\\Cbar' },
    { name: 'lots of backslashes', input: 'foo\\\\\\\\$(VAR_A)bar', want: 'foo\\\\\\\\Abar' },
    { name: 'nested var references', input: '$(VAR_A$(VAR_B))', want: '$(VAR_A$(VAR_B))' },
    { name: 'nested var references, second type', input: '$(VAR_A$(VAR_B)', want: '$(VAR_A$(VAR_B)' },
    { name: 'value is a reference: not expanded again', input: '$(VAR_REF)', want: '$(VAR_A)' },
    { name: 'value is a reference x 2', input: '%%$(VAR_REF)--$(VAR_REF)%%', want: '%%$(VAR_A)--$(VAR_A)%%' },
    { name: 'empty var', input: 'foo$(VAR_EMPTY)bar', want: 'foobar' },
    { name: 'unterminated expression', input: 'foo$(VAR_Awhoops!', want: 'foo$(VAR_Awhoops!' },
    { name: 'expression without operator', input: 'f00__(VAR_A)__', want: 'f00__(VAR_A)__' },
    { name: 'shell special vars pass through', input: '$?_boo_$!', want: '$?_boo_$!' },
    { name: 'bare operators are ignored', input: '$VAR_A', want: '$VAR_A' },
    { name: 'undefined vars are passed through', input: '$(VAR_DNE)', want: '$(VAR_DNE)' },
    { name: 'multiple undefined vars are passed through', input: '$(GOOD_ODDS)_$(VAR_DNE)', want: '$(GOOD_ODDS)_$(VAR_DNE)' },
    { name: 'multiple (even) operators, var undefined', input: '$$$$$$(BIG_MONEY)', want: '$$$(BIG_MONEY)' },
    { name: 'multiple (even) operators, var defined', input: '$$$$$$(VAR_A)', want: '$$$(VAR_A)' },
    { name: 'multiple (odd) operators, var undefined', input: '$$$$$$$(GOOD_ODDS)', want: '$$$$(GOOD_ODDS)' },
    { name: 'multiple (odd) operators, var defined', input: '$$$$$$$(VAR_A)', want: '$$$A' },
    { name: 'trailing incomplete expression not consumed', input: '$(VAR_B)_______$(A', want: 'B_______$(A' },
    { name: 'trailing incomplete expression, no content, is not consumed', input: '$(VAR_C)_______$(', want: 'C_______$(' },
    { name: 'operator at end of input string is preserved', input: '$(VAR_A)foobarzab$', want: 'Afoobarzab$' },
    { name: 'shell escaped incomplete expr', input: 'foo-\\$(VAR_A', want: 'foo-\\$(VAR_A' },
    { name: 'lots of $( in middle', input: '--$($($($($--', want: '--$($($($($--' },
    { name: 'lots of $( in beginning', input: '$($($($($--foo$(', want: '$($($($($--foo$(' },
    { name: 'lots of $( at end', input: 'foo0--$($($($(', want: 'foo0--$($($($(' },
    { name: 'escaped operators in variable names are not escaped', input: '$(foo$$var)', want: '$(foo$$var)' },
    { name: 'newline not expanded', input: '\n', want: '\n' },
    { name: 'a name any env var may have, beyond C identifiers', input: '$(my-var.x)/$(1ST)', want: 'dotted/first' },
    { name: 'an operator before a non-ASCII character', input: '$é$😀', want: '$é$😀' },
  ];
  for (const tc of cases) it(tc.name, () => assert.equal(expand(tc.input, mapping), tc.want));

  it('mappingFuncFor: the first map that has the name wins', () => {
    const m = mappingFuncFor(new Map([['A', 'first']]), new Map([['A', 'second'], ['B', 'b']]));
    assert.equal(expand('$(A)$(B)$(C)', m), 'firstb$(C)');
  });
});
