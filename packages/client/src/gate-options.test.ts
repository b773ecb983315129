import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gateChoices, isDenial } from './gate-options.ts';

describe('gate options', () => {
  test('every option is offered in order, as its own answer, and Deny is added when none says no', () => {
    assert.deepEqual(gateChoices(['the 7:10', 'the 9:40']), [
      { label: 'the 7:10', approved: true, answer: 'the 7:10' },
      { label: 'the 9:40', approved: true, answer: 'the 9:40' },
      { label: 'Deny', approved: false, answer: 'deny' },
    ]);
  });

  test('an option that says no denies, and no second Deny is added', () => {
    assert.deepEqual(gateChoices(['approve', 'deny']), [
      { label: 'approve', approved: true, answer: 'approve' },
      { label: 'deny', approved: false, answer: 'deny' },
    ]);
    assert.deepEqual(
      gateChoices(['Yes', ' No ']).map((choice) => choice.approved),
      [true, false],
    );
  });

  test('a gate without options offers yes and no', () => {
    assert.deepEqual(
      gateChoices([]).map((choice) => [choice.label, choice.approved]),
      [
        ['yes', true],
        ['no', false],
      ],
    );
  });

  test('denial words, whatever their case or spaces; anything else is not one', () => {
    for (const word of ['n', 'No', 'DENY', 'denied', 'reject', ' cancel ']) assert.equal(isDenial(word), true, word);
    for (const word of ['yes', 'not now, later', 'the 9:40', '']) assert.equal(isDenial(word), false, word);
  });
});
