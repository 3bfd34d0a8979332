// The overview's notebook line names as VS Code counts cells (extension/src/sourceLines.ts namedAsShown).
import { describe, expect, it } from 'vitest';
import { namedAsShown, openCellIndex } from '../src/sourceLines';

const cell = (uri: string, index: number) => ({ index, document: { uri: { toString: () => uri } } });
// a notebook of a markdown cell, two code cells, a markdown cell and a code cell (VS Code's cell order)
const NB = {
  getCells: () => [cell('c#md0', 0), cell('c#a', 1), cell('c#k', 2), cell('c#md3', 3), cell('c#l', 4)],
};

describe('namedAsShown', () => {
  it('renames each cell range by its index in the notebook, as VS Code shows cells', () => {
    // the server was sent the three Python cells only: it numbered them 1, 2, 3
    const ov = {
      file: '/w/nb.ipynb',
      lineNames: [
        { file: '/w/nb.ipynb', first: 1, last: 4, name: 'cell 1', cell: 'c#a' },
        { file: '/w/nb.ipynb', first: 5, last: 12, name: 'cell 2', cell: 'c#k' },
        { file: '/w/nb.ipynb', first: 13, last: 20, name: 'cell 3', cell: 'c#l' },
        { file: '/w/nb.ipynb', first: 21, last: 22, name: 'cell 4', cell: 'c#gone' },
      ],
    };
    const shown = namedAsShown(ov, (uri) => openCellIndex([NB as never], uri));
    expect(shown.lineNames.map((n) => n.name)).toEqual(['cell 2', 'cell 3', 'cell 5', 'cell 4']); // a cell not open keeps its name
    expect(shown.lineNames.map((n) => [n.first, n.last])).toEqual(ov.lineNames.map((n) => [n.first, n.last]));
    expect(ov.lineNames[0].name).toBe('cell 1'); // the answer itself is not changed
  });
  it('leaves an overview without names as it is', () => {
    const ov = { file: '/w/k.py' };
    expect(namedAsShown(ov, () => 0)).toBe(ov);
    expect(openCellIndex([], 'c#a')).toBeUndefined();
  });
});
