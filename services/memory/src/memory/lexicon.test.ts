import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Lexicon, withinOneEdit } from './lexicon.ts';

describe('withinOneEdit', () => {
  it('accepts equal words and every kind of single edit', () => {
    assert.ok(withinOneEdit('garden', 'garden'));
    assert.ok(withinOneEdit('restaurant', 'restuarant'), 'adjacent transposition');
    assert.ok(withinOneEdit('ab', 'ba'), 'transposition of a whole word');
    assert.ok(withinOneEdit('garden', 'gardens'), 'insertion at the end');
    assert.ok(withinOneEdit('garden', 'xgarden'), 'insertion at the start');
    assert.ok(withinOneEdit('colour', 'color'), 'deletion');
    assert.ok(withinOneEdit('garden', 'warden'), 'substitution at the start');
    assert.ok(withinOneEdit('garden', 'gardan'), 'substitution inside');
    assert.ok(withinOneEdit('', 'a'));
  });

  it('refuses two edits or more', () => {
    assert.ok(!withinOneEdit('garden', 'gordon'), 'two substitutions');
    assert.ok(!withinOneEdit('garden', 'gard'), 'two deletions');
    assert.ok(!withinOneEdit('garden', 'xgardenx'), 'two insertions');
    assert.ok(!withinOneEdit('abcd', 'badc'), 'two transpositions');
    assert.ok(!withinOneEdit('abc', 'cba'), 'a swap of letters that are not adjacent');
    assert.ok(!withinOneEdit('colour', 'calor'), 'a deletion and a substitution');
    assert.ok(!withinOneEdit('', 'ab'));
  });

  it('is symmetric', () => {
    for (const [a, b] of [
      ['restaurant', 'restuarant'],
      ['colour', 'color'],
      ['garden', 'gordon'],
      ['abc', 'cba'],
    ] as const)
      assert.equal(withinOneEdit(a, b), withinOneEdit(b, a), `${a} / ${b}`);
  });
});

describe('Lexicon', () => {
  const sample = () => {
    const lexicon = new Lexicon();
    lexicon.load(
      [
        { lexeme: 'garden', documents: 3 },
        { lexeme: 'warden', documents: 7 },
        { lexeme: 'harden', documents: 1 },
        { lexeme: 'restaur', documents: 2 },
        { lexeme: 'cat', documents: 5 },
      ],
      10,
      40,
    );
    return lexicon;
  };

  it('corrects an unknown stem to known stems one edit away, most frequent first', () => {
    const lexicon = sample();
    assert.deepEqual(lexicon.corrections('restuar'), ['restaur'], 'transposition');
    assert.deepEqual(lexicon.corrections('restaurx'), ['restaur'], 'insertion');
    assert.deepEqual(lexicon.corrections('restur'), ['restaur'], 'deletion');
    assert.deepEqual(lexicon.corrections('restaud'), ['restaur'], 'substitution');
    // "xarden" is one substitution from garden, warden and harden: the two most frequent, in frequency order.
    assert.deepEqual(lexicon.corrections('xarden'), ['warden', 'garden']);
    assert.deepEqual(lexicon.corrections('xarden', 3), ['warden', 'garden', 'harden']);
  });

  it('does not correct a known stem, a stem two edits away or a stem under four characters', () => {
    const lexicon = sample();
    assert.deepEqual(lexicon.corrections('garden'), [], 'known stems are not corrected');
    assert.deepEqual(lexicon.corrections('restuaru'), [], 'two edits');
    assert.deepEqual(lexicon.corrections('gordon'), []);
    assert.deepEqual(lexicon.corrections('cot'), [], 'three characters: one edit away from too many words');
    assert.deepEqual(lexicon.corrections('cats'), ['cat'], 'four characters are corrected');
  });

  it('follows stored (+1) and erased (-1) memories in its counts and its corrections', () => {
    const lexicon = new Lexicon();
    assert.equal(lexicon.documentCount, 0);
    assert.equal(lexicon.averageLength, 1, 'an empty lexicon has a neutral length');
    lexicon.record(['garden', 'water', 'rose'], 1);
    lexicon.record(['garden', 'fence'], 1);
    assert.equal(lexicon.documentCount, 2);
    assert.equal(lexicon.documentFrequency('garden'), 2);
    assert.equal(lexicon.documentFrequency('fence'), 1);
    assert.equal(lexicon.documentFrequency('unknown'), 0);
    assert.equal(lexicon.averageLength, 2.5);
    assert.deepEqual(lexicon.corrections('fense'), ['fence']);

    lexicon.record(['garden', 'fence'], -1);
    assert.equal(lexicon.documentCount, 1);
    assert.equal(lexicon.documentFrequency('garden'), 1);
    assert.equal(lexicon.documentFrequency('fence'), 0);
    assert.equal(lexicon.averageLength, 3);
    assert.deepEqual(lexicon.corrections('fense'), [], 'a stem no memory holds any more is not a correction');
    assert.deepEqual(lexicon.corrections('gardn'), ['garden'], 'a stem still held stays one');

    lexicon.record(['fence'], 1);
    assert.deepEqual(lexicon.corrections('fense'), ['fence'], 'and comes back when stored again');
  });

  it('never counts below zero', () => {
    const lexicon = new Lexicon();
    lexicon.record(['ghost'], -1);
    assert.equal(lexicon.documentCount, 0);
    assert.equal(lexicon.documentFrequency('ghost'), 0);
    assert.equal(lexicon.averageLength, 1);
    assert.deepEqual(lexicon.corrections('ghosts'), []);
  });

  it('reloads from scratch, forgetting what it counted before', () => {
    const lexicon = sample();
    lexicon.record(['orchid'], 1);
    lexicon.load([{ lexeme: 'tulip', documents: 4 }], 4, 12);
    assert.equal(lexicon.documentCount, 4);
    assert.equal(lexicon.averageLength, 3);
    assert.equal(lexicon.documentFrequency('orchid'), 0);
    assert.equal(lexicon.documentFrequency('garden'), 0);
    assert.deepEqual(lexicon.corrections('gardn'), [], 'no corrections to stems of the old counts');
    assert.deepEqual(lexicon.corrections('tulpi'), ['tulip']);
  });

  it('weighs a rare stem above a common one, and a stem in every memory almost nothing', () => {
    const lexicon = sample();
    const rare = lexicon.inverseFrequency('harden');
    const common = lexicon.inverseFrequency('warden');
    assert.ok(rare > common, `${rare} > ${common}`);
    assert.ok(lexicon.inverseFrequency('unseen') > rare, 'a stem no memory holds weighs most');
    const everywhere = new Lexicon();
    everywhere.load([{ lexeme: 'user', documents: 100 }], 100, 500);
    assert.ok(everywhere.inverseFrequency('user') > 0);
    assert.ok(everywhere.inverseFrequency('user') < 0.01);
  });
});
