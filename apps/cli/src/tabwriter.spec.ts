import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { tabwrite } from './tabwriter.js';

describe('tabwrite (text/tabwriter)', () => {
  const cases: { name: string; text: string; minWidth: number; padding: number; want: string }[] = [
    { name: 'columns padded to the widest cell', text: 'a\tbb\tc\nccc\td\te\n', minWidth: 0, padding: 2, want: 'a    bb  c\nccc  d   e\n' },
    { name: 'the minimal width', text: 'a\tb\n', minWidth: 6, padding: 3, want: 'a     b\n' },
    { name: 'a line without a tab ends the block', text: 'Name:\tx\nContainers:\nImage ID:\ty\n', minWidth: 0, padding: 2, want: 'Name:  x\nContainers:\nImage ID:  y\n' },
    { name: 'lines with fewer cells split the inner column', text: 'a\tb\tc\naaaa\tb\nx\tbbbbb\tc\n', minWidth: 0, padding: 1, want: 'a    b c\naaaa b\nx    bbbbb c\n' },
    { name: 'an empty leading cell is padded too', text: 'Labels:\ta=b\n\tc=d\n', minWidth: 0, padding: 2, want: 'Labels:  a=b\n         c=d\n' },
    { name: 'width counts characters, not bytes', text: 'é\tx\nab\ty\n', minWidth: 0, padding: 1, want: 'é  x\nab y\n' },
  ];
  for (const tc of cases) {
    it(tc.name, () => assert.equal(tabwrite(tc.text, { minWidth: tc.minWidth, padding: tc.padding }), tc.want));
  }
});
