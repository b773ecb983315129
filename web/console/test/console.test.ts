import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { generateAgentKey } from '@platform/client/agent-key';
import { SettlementClient } from '@platform/client/settlement-client';
import { parseAmount } from '@platform/kit/money';
import { pollUntil } from '@platform/testkit/eventually';
import { publishListing, startTranslator } from '@platform/testkit/marketplace-listing';
import { startNetworkLink } from '@platform/testkit/network-link';
import { type RunningPlatform, startPlatform } from '@platform/testkit/platform-up';
import { compiled, gatedPlan, railScript, toolStep } from '@platform/testkit/rail-script';
import { type ScriptedModel, startScriptedModel } from '@platform/testkit/scripted-model';
import type { BrowserContext, Locator, Page } from 'playwright-core';
import { desktop, launchBrowser, phone, screenshot, screenshotBoth } from './browser.ts';

/*
 * The console in a real browser (Debian's Chromium through playwright-core) against the real platform (`platform up`
 * as a child process) with a scripted OpenAI-compatible model behind the real gateway. One platform, one browser and
 * one signed-in page for the whole file; the scenarios run in order on it.
 */

const question = 'Book the train to Lyon?';
const trainQuestion = 'Which train to Lyon?';
/** While set, the model streams a chat answer up to its last word and holds that back until the promise resolves. */
let holdLastWord: Promise<void> | undefined;
const chatScript = railScript({
  compile: compiled('book the train to Lyon'),
  plans: [gatedPlan(question, ['yes', 'no'])],
  chat: (request) => {
    const answer = request.user.includes('trip')
      ? { reply: 'On it: I will ask you before booking.', task: 'book the train to Lyon', remember: [] }
      : { reply: `You said: ${request.user.split('\n').at(-1)}`, task: null, remember: request.user.includes('hello') ? ['The person likes trains.'] : [] };
    if (holdLastWord === undefined) return answer;
    const text = JSON.stringify(answer);
    const cut = text.indexOf(answer.reply) + answer.reply.lastIndexOf(' ');
    return { chunks: [text.slice(0, cut), holdLastWord.then(() => text.slice(cut))] };
  },
  answer: 'Booked: the train leaves at 9.',
});

let model: ScriptedModel;
let platform: RunningPlatform;
let browser: Awaited<ReturnType<typeof launchBrowser>>;
let context: BrowserContext;
let page: Page;
let router: string;
let receiptSeq = 0;
let payer: SettlementClient;
let link: Awaited<ReturnType<typeof startNetworkLink>>;
let translator: Awaited<ReturnType<typeof startTranslator>>;
const consoleErrors: string[] = [];

/** A call to the router as the signed-in person, with the page's own token. */
async function asUser(method: string, path: string, body?: unknown) {
  const session = JSON.parse((await page.evaluate(() => sessionStorage.getItem('console.session'))) ?? '{}') as { token: string };
  const response = await fetch(`${router}${path}`, {
    method,
    headers: { authorization: `Bearer ${session.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as { ok: boolean; data: Record<string, unknown> };
}

const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
/** The transcript entries (not the answer being written) that show exactly this text. */
const entriesWith = (text: string) => page.locator('[data-testid="transcript"] li[data-seq] p', { hasText: exactly(text) });

/** Micro-units of an amount the page shows (it writes 2 to 6 places). */
function micros(text: string | null): bigint {
  const parsed = parseAmount(text?.trim(), { allowZero: true });
  assert.ok(parsed.ok, `an amount: ${text}`);
  return parsed.micros;
}

/** A proof (hex hashes) with one bit changed, or one hash more when it is empty: what a lying server could send. */
function changedProof(proof: string[]): string[] {
  const [first, ...rest] = proof;
  if (first === undefined) return ['00'.repeat(32)];
  return [`${first.slice(0, -1)}${first.endsWith('0') ? '1' : '0'}`, ...rest];
}

/** Whether `locator` has the keyboard focus and draws a visible outline for it (`:focus-visible`). */
async function focusShown(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => {
    const style = element.ownerDocument.defaultView?.getComputedStyle(element);
    return element === element.ownerDocument.activeElement && style?.outlineStyle !== 'none' && Number.parseFloat(style?.outlineWidth ?? '0') >= 2;
  });
}

/** Presses Tab until `locator` has the focus, at most `presses` times (a keyboard user's walk through the page). */
async function tabTo(locator: Locator, presses: number): Promise<void> {
  for (let pressed = 0; pressed < presses; pressed++) {
    if (await locator.evaluate((element) => element === element.ownerDocument.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  assert.ok(await locator.evaluate((element) => element === element.ownerDocument.activeElement), `reached with at most ${presses} Tabs`);
}

/** Whether the element is drawn whole inside the window, not cut by a box around it nor covered (its middle is it). */
async function inSight(locator: Locator): Promise<boolean> {
  return locator.evaluate((element) => {
    // Up or down to it, as a person scrolls a page; never sideways inside a box (that is what must not be needed).
    const window = element.ownerDocument.defaultView;
    if (window === null) return false;
    window.scrollBy(0, element.getBoundingClientRect().top - window.innerHeight / 2);
    const rect = element.getBoundingClientRect();
    const view = element.ownerDocument.documentElement;
    const inside = rect.left >= 0 && rect.right <= view.clientWidth && rect.width > 0;
    let clipped = false;
    for (let box = element.parentElement; box; box = box.parentElement) {
      const outer = box.getBoundingClientRect();
      if (window.getComputedStyle(box).overflowX !== 'visible' && (rect.left < outer.left - 0.5 || rect.right > outer.right + 0.5)) clipped = true;
    }
    const hit = element.ownerDocument.elementFromPoint(rect.left + rect.width / 2, rect.top + rect.height / 2);
    return inside && !clipped && hit !== null && element.contains(hit);
  });
}

/** What `overflowing` reads of an element (this file is type-checked without the DOM's types). */
interface PageElement {
  tagName: string;
  id: string;
  className: unknown;
  textContent: string | null;
  namespaceURI: string | null;
  clientWidth: number;
  clientHeight: number;
  scrollWidth: number;
  parentElement: PageElement | null;
  ownerDocument: { body: unknown };
  getClientRects(): { length: number };
  getBoundingClientRect(): { left: number; right: number };
  querySelectorAll(selector: string): Iterable<PageElement>;
}

/**
 * Every element of the page (form fields and what is hidden on purpose aside) whose content is wider than its box, or
 * that reaches past the window's sides: what a phone would cut off or scroll sideways. Run in the page, on `<html>`.
 */
function overflowing(view: PageElement): string[] {
  const name = (element: PageElement) =>
    `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}${element.className ? `.${String(element.className).split(' ').join('.')}` : ''} “${(element.textContent ?? '').trim().slice(0, 40)}”`;
  // Visually hidden (a table's headings on a phone, a label for screen readers): one pixel, clipped, not seen.
  const hidden = (element: PageElement) => {
    for (let box: PageElement | null = element; box; box = box.parentElement)
      if (box.clientWidth <= 1 && box.clientHeight <= 1 && box !== element.ownerDocument.body) return true;
    return false;
  };
  const found: string[] = [];
  if (view.scrollWidth > view.clientWidth) found.push(`the page is ${view.scrollWidth} px wide in a ${view.clientWidth} px window`);
  for (const element of view.querySelectorAll('body *')) {
    // HTML only (an SVG's parts are drawn inside its box), form fields aside (their text may run past their edge).
    if (element.namespaceURI !== 'http://www.w3.org/1999/xhtml' || ['INPUT', 'TEXTAREA', 'SELECT', 'OPTION'].includes(element.tagName)) continue;
    if (element.getClientRects().length === 0 || hidden(element)) continue;
    const rect = element.getBoundingClientRect();
    if (element.scrollWidth > element.clientWidth + 1) found.push(`${name(element)}: ${element.scrollWidth} px of content in ${element.clientWidth} px`);
    else if (rect.right > view.clientWidth + 1 || rect.left < -1) found.push(`${name(element)}: from ${Math.round(rect.left)} to ${Math.round(rect.right)} px`);
  }
  return found;
}

/** The views of the navigation, with what shows each has loaded (its data, not only its frame). */
const phoneViews: [string, (page: Page) => Locator][] = [
  ['Alarms', (page) => page.locator('[data-testid="alarms"] tr[data-alarm]')],
  ['Chat', (page) => page.getByTestId('stream-state').getByText('Live')],
  ['Money', (page) => page.locator('[data-testid="batches"] li')],
  ['Spend', (page) => page.locator('[data-testid="spend-intents"] tr[data-intent]')],
  ['Memories', (page) => page.getByRole('heading', { name: 'Memories' })],
  ['Market', (page) => page.getByRole('heading', { name: 'Your calls' })],
];

before(async () => {
  model = await startScriptedModel(chatScript);
  link = await startNetworkLink();
  translator = await startTranslator();
  browser = await launchBrowser({ proxy: link.url });
  context = browser.context;
  page = await context.newPage();
  // What the browser's console shows a person who opens its developer tools: a failed load is an error there too.
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  if (process.env.CONSOLE_TEST_DEBUG) {
    page.on('console', (message) => console.error('page:', message.text()));
    page.on('requestfailed', (request) => console.error('failed:', request.url(), request.failure()?.errorText));
    page.on('request', (request) => console.error('request:', request.method(), request.url(), request.headers()['last-event-id'] ?? ''));
  }
  platform = await startPlatform({ env: { GATEWAY_UPSTREAM_URL: model.url, SCHEDULER_DISPATCHER: 'false' } });
  router = platform.url('router');
});

// A failed scenario leaves what a person would have seen and what the platform said, for the next reader.
afterEach(async (t) => {
  // `passed` is Node's (22.x and later), not yet in the typings.
  if ((t as { passed?: boolean }).passed !== false || !page) return;
  await screenshot(page, `failed-${t.name.slice(0, 40).replace(/[^a-z0-9]+/gi, '-')}`).catch(() => undefined);
  const transcript = await page
    .locator('main')
    .textContent()
    .catch(() => null);
  console.error(`the page at ${page.url()} showed:\n${transcript ?? '(nothing)'}`);
  if (platform) console.error(`platform up said (last lines):\n${platform.output().stderr.split('\n').slice(-80).join('\n')}`);
});

after(async () => {
  await browser?.close();
  await platform?.stop();
  await model?.close();
  await link?.close();
  await translator?.close();
});

describe('the console in a browser', () => {
  it('signs in through the identity provider (code with PKCE) and keeps the code out of the address bar', async () => {
    await page.goto(`${router}/console/`);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Views' }).waitFor();
    const url = new URL(page.url());
    assert.equal(url.pathname, '/console/');
    assert.equal(url.search, '', 'no code or state left in the URL');
    assert.match((await page.evaluate(() => sessionStorage.getItem('console.session'))) ?? '', /"token":"ey/);
    await page.getByTestId('stream-state').getByText('Live').waitFor();
    // A new user's first load: the transcript of a conversation not begun yet is empty (it was a 404, logged as an error).
    await page.getByRole('heading', { name: 'Intents' }).waitFor();
    assert.deepEqual(consoleErrors, [], 'no error in the browser console on the first load');
    await screenshotBoth(page, '01-signed-in');
  });

  it('sends a message and shows the answer stream in on the event stream, then the final answer once', async () => {
    let releaseLastWord = () => {};
    holdLastWord = new Promise<void>((resolve) => {
      releaseLastWord = resolve;
    });
    try {
      await page.getByLabel('Message to your agent').fill('hello agent');
      await page.keyboard.press('Enter');
      const preview = page.getByTestId('answer-preview');
      await preview.getByText(exactly('You said: hello')).waitFor();
      assert.equal(await page.getByTestId('transcript').getAttribute('aria-busy'), 'true', 'read out when finished, not word by word');
      assert.equal(await entriesWith('You said: hello agent').count(), 0, 'the model has not finished');
      await screenshotBoth(page, '02-chat-streaming');
      releaseLastWord();
      await entriesWith('You said: hello agent').waitFor();
      assert.equal(await preview.count(), 0, 'the answer replaced its preview in the same render');
    } finally {
      releaseLastWord();
      holdLastWord = undefined;
    }
    assert.equal(await entriesWith('hello agent').count(), 1);
    const shown = page.locator('[data-testid="transcript"] li p', { hasText: exactly('You said: hello agent') });
    assert.equal(await shown.count(), 1, 'the answer shows once');
    assert.equal(await page.getByTestId('transcript').getAttribute('aria-busy'), 'false');
    await screenshotBoth(page, '02-chat');
  });

  it('asks the gate as a question; approving it lets the intent complete, its journal verified in the browser', async () => {
    // The intent's card subscribes to its events only once the gate has been asked: nothing happens after that until
    // the person answers, so the gate must come from the stream's opening snapshot, not from an event.
    await page.route('**/events?intent_id=*', async (route) => {
      const id = new URL(route.request().url()).searchParams.get('intent_id');
      const gates = async () => ((await asUser('GET', `/intents/${id}`)).data.state as { gates?: unknown[] } | undefined)?.gates ?? [];
      await pollUntil(async () => (await gates()).length > 0, 'the gate is asked', { timeoutMs: 20_000, intervalMs: 50 });
      await route.continue();
    });
    await page.getByLabel('Message to your agent').fill('plan a trip to Lyon');
    await page.getByRole('button', { name: 'Send' }).click();
    const gate = page.locator('fieldset.gate', { hasText: question });
    await gate.waitFor();
    await page.unroute('**/events?intent_id=*');
    await screenshotBoth(page, '03-gate');
    await gate.getByRole('button', { name: 'yes', exact: true }).click();
    const intent = page.locator('article.intent[data-status="completed"]');
    await intent.getByText('Booked: the train leaves at 9.').waitFor();
    await intent.getByTestId('gate-outcome').getByText('You chose “yes”').waitFor();
    await intent.locator('summary').click();
    await intent
      .getByTestId('journal-verdict')
      .getByText(/^All \d+ envelopes verified/)
      .waitFor();
    assert.equal(await intent.locator('li.envelope[data-mark="failed"]').count(), 0);
    await screenshotBoth(page, '04-intent-completed');
  });

  it('marks the envelope that fails when the journal it is served has been edited', async () => {
    await page.route('**/intents/*', async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      if (Array.isArray(body?.data?.envelopes) && body.data.envelopes.length > 2) body.data.envelopes[2].body = { edited: true };
      await route.fulfill({ response, json: body });
    });
    await page.reload();
    const intent = page.locator('article.intent[data-status="completed"]');
    await intent.locator('button.disclosure').click();
    await intent.locator('summary').click();
    await intent.getByTestId('journal-verdict').getByText('Envelope 3 failed: signature does not verify').waitFor();
    assert.equal(await intent.locator('li.envelope[data-mark="failed"]').count(), 1);
    assert.equal(await intent.locator('li.envelope[data-mark="verified"]').count(), 2);
    await screenshotBoth(page, '05-journal-tampered');
    await page.unroute('**/intents/*');
    await page.reload();
    await page.getByTestId('stream-state').getByText('Live').waitFor();
  });

  it('after a network drop resumes the live transcript from the last event, without duplicates', async () => {
    const resumedFrom: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/events') resumedFrom.push(request.headers()['last-event-id'] ?? '');
    });
    await page.getByLabel('Message to your agent').fill('before the drop');
    await page.keyboard.press('Enter');
    await entriesWith('You said: before the drop').waitFor();
    link.cut();
    await page.getByTestId('stream-state').getByText('Connection lost, reconnecting…').waitFor();
    // Said while the page's link is down: it must arrive once the page is back, replayed after its Last-Event-ID.
    const sent = await asUser('POST', '/chat', { message: 'while you were away', conversation_id: 'default' });
    assert.equal(sent.ok, true);
    link.restore();
    await entriesWith('You said: while you were away').waitFor({ timeout: 30_000 });
    await page.getByTestId('stream-state').getByText('Live').waitFor();
    assert.equal(await entriesWith('while you were away').count(), 1);
    assert.equal(await entriesWith('You said: while you were away').count(), 1);
    assert.equal(await entriesWith('hello agent').count(), 1);
    assert.equal(await entriesWith('You said: before the drop').count(), 1);
    // Every reconnect named the last event the page had seen (the daemon's `<boot>-<n>` ids).
    assert.ok(resumedFrom.length > 0 && resumedFrom.every((id) => /^[0-9a-f]{8}-\d+$/.test(id)), JSON.stringify(resumedFrom));
    await screenshotBoth(page, '06-resumed');
  });

  it('shows a transfer to the agent appear live in the public feed, and its balance change', async () => {
    await page.goto(`${router}/console/#/money`);
    await page.locator('#feed-title').getByText('live').waitFor();
    const ledgerToken = await platform.secret('LEDGER_TOKEN');
    payer = new SettlementClient({ baseUrl: platform.url('settlement'), transportToken: ledgerToken, key: generateAgentKey() });
    await payer.faucet('5');
    const account = await asUser('GET', '/account');
    const paid = await payer.pay({ to: account.data.did as string, amount: '1.25' });
    const row = page.locator(`[data-testid="transfers"] tr[data-seq="${paid.seq}"]`);
    await row.waitFor();
    assert.match((await row.textContent()) ?? '', /transfer.*you.*1\.250000/);
    await page.getByTestId('balance').getByText('1.250000').waitFor();
    // Every unit is backed: once the faucet's deposit is credited the page shows the supply equal to the reserve.
    const shown = () => Promise.all(['supply', 'reserve', 'fully-reserved'].map((id) => page.getByTestId(id).textContent()));
    await pollUntil(
      async () => {
        const [supply, reserve, backed] = await shown();
        return supply === reserve && backed === 'yes';
      },
      'the supply equals the reserve',
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    assert.ok(micros(await page.getByTestId('supply').textContent()) >= 5_000_000n, 'the faucet’s 5 are in the supply');
    // The volume chart's bar for this minute carries what moved in it, in the chart's table of numbers too.
    const feed = (await asUser('GET', '/ledger/v1/transfers?limit=50')).data.transfers as { seq: number; at: string; amount: string }[];
    const minute = feed.find((transfer) => transfer.seq === paid.seq)?.at.slice(11, 16) ?? 'the transfer is in the feed';
    const volume = feed.filter((transfer) => transfer.at.slice(11, 16) === minute).reduce((sum, transfer) => sum + micros(transfer.amount), 0n);
    const bar = page.getByTestId('chart-numbers').locator('tr', { has: page.locator('th', { hasText: minute }) });
    await pollUntil(
      async () => (await bar.count()) === 1 && micros(await bar.locator('td').textContent()) === volume,
      `the ${minute} bar shows ${volume} micros`,
      {
        timeoutMs: 10_000,
        intervalMs: 50,
      },
    );
    assert.equal(await page.locator('svg.chart rect.bar title', { hasText: `${minute} UTC` }).count(), 1);
    await screenshotBoth(page, '07-money-live');
    receiptSeq = paid.seq;
  });

  it('shows a transfer made while the feed was still connecting, and the balance it changed, once the feed is live', async () => {
    // The feed's stream is held until the transfer is made: it is in no stream frame, only in the transfers read.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/ledger/v1/stream', async (route) => {
      await held;
      await route.continue();
    });
    await page.reload();
    await page.locator('#feed-title').getByText('connecting').waitFor();
    const account = await asUser('GET', '/account');
    const paid = await payer.pay({ to: account.data.did as string, amount: '0.5' });
    release();
    await page.locator('#feed-title').getByText('live').waitFor();
    await page.locator(`[data-testid="transfers"] tr[data-seq="${paid.seq}"]`).waitFor();
    await page.getByTestId('balance').getByText('1.750000').waitFor();
    await screenshotBoth(page, '07b-money-held-stream');
    await page.unroute('**/ledger/v1/stream');
  });

  it('verifies a receipt in the browser against a later checkpoint, and refuses changed bytes, inclusion or consistency proofs', async () => {
    const verdict = page.getByTestId('receipt-verdict');
    const verify = async () => {
      await page.getByLabel('Receipt seq').fill(String(receiptSeq));
      await page.getByRole('button', { name: 'Verify' }).click();
    };
    // Until its window closes into a batch no checkpoint covers it: the page says so, then the window is closed.
    await verify();
    await verdict.getByText('✗ Not verified: no checkpoint covers the receipt yet (its window has not closed into a batch)').waitFor();
    const closed = await payer.settle();
    // The batch that now covers it is listed (its anchor event on the feed reloads the list).
    const batch = closed.batch as { number: number; log_size: number };
    await page.locator(`[data-testid="batches"] li[data-batch="${batch.number}"]`).getByText(`receipts up to ${batch.log_size}`).waitFor();
    await verify();
    await verdict.getByText(/^✓ Verified: signed by the sequencer, leaf \d+ of the checkpoint of \d+; no later checkpoint yet/).waitFor();
    await screenshotBoth(page, '08-receipt-verified');
    // A later batch: the page now also proves the latest checkpoint extends the receipt's (the log was not rewritten).
    const account = await asUser('GET', '/account');
    await payer.pay({ to: account.data.did as string, amount: '0.25' });
    await payer.settle();
    await verify();
    const consistent = verdict.getByText(
      /^✓ Verified: signed by the sequencer, leaf \d+ of the checkpoint of (\d+); consistency proof verified: the latest checkpoint \((\d+)\) extends it/,
    );
    await consistent.waitFor();
    const [, covering, latest] = /checkpoint of (\d+);.*\((\d+)\)/.exec((await consistent.textContent()) ?? '') ?? [];
    assert.ok(Number(latest) > Number(covering), `the latest checkpoint (${latest}) is later than the receipt's (${covering})`);
    await screenshotBoth(page, '08b-receipt-consistent');

    // A server lying about any part of the evidence is caught in the page, each at its own check.
    const tamper = async (pattern: string, change: (data: Record<string, unknown>) => void, reason: string | RegExp, shot: string) => {
      await page.route(pattern, async (route) => {
        const response = await route.fetch();
        const body = await response.json();
        change(body.data);
        await route.fulfill({ response, json: body });
      });
      await verify();
      await verdict.getByText(reason).waitFor();
      await screenshotBoth(page, shot);
      await page.unroute(pattern);
    };
    await tamper(
      '**/ledger/v1/receipt/*',
      (data) => {
        (data.receipt as Record<string, unknown>).amount = '9.000000';
      },
      '✗ Not verified: receipt: signature does not verify over the receipt',
      '09-receipt-tampered',
    );
    await tamper(
      '**/ledger/v1/receipt/*',
      (data) => {
        data.inclusion_proof = changedProof(data.inclusion_proof as string[]);
      },
      new RegExp(`^✗ Not verified: inclusion proof: leaf ${receiptSeq - 1} does not lead to the root of the checkpoint of size ${covering}$`),
      '09-receipt-inclusion-tampered',
    );
    await tamper(
      '**/ledger/v1/log/consistency*',
      (data) => {
        data.proof = changedProof(data.proof as string[]);
      },
      `✗ Not verified: consistency proof: the latest checkpoint (size ${latest}) does not extend the receipt's (size ${covering})`,
      '09-receipt-consistency-tampered',
    );
  });

  it('lists the agent’s open holds from settlement: amount, payee, expiry', async () => {
    const account = await asUser('GET', '/account');
    const agent = account.data.did as string;
    const placed = await payer.session.request<{ hold: { id: string; expires_at: string } }>('POST', '/v1/hold', {
      to: agent,
      amount: '0.5',
      expires_in_seconds: 3600,
    });
    // The hold's receipt arrives on the live feed, and the page asks settlement (through the daemon) for its holds again.
    const row = page.locator(`[data-testid="holds"] tr[data-hold="${placed.hold.id}"]`);
    await row.waitFor();
    const text = (await row.textContent()) ?? '';
    assert.match(text, /held for you by did:platform:/);
    assert.match(text, /0\.500000/);
    assert.match(text, /you/, 'the agent is the payee');
    assert.equal(await row.locator('time').getAttribute('datetime'), placed.hold.expires_at);
    await screenshotBoth(page, '09b-holds');
  });

  it('creates an alarm and cancels it', async () => {
    await page.goto(`${router}/console/#/alarms`);
    await page.getByLabel('Wake your agent with').fill('water the plants');
    await page.getByLabel('Minutes', { exact: true }).fill('30');
    await page.getByRole('button', { name: 'Create alarm' }).click();
    const row = page.locator('[data-testid="alarms"] tr', { hasText: 'water the plants' });
    await row.locator('.badge', { hasText: 'active' }).waitFor();
    await screenshotBoth(page, '10-alarm-created');
    await row.getByRole('button', { name: 'Cancel the alarm “water the plants”' }).click();
    await row.locator('.badge', { hasText: 'cancelled' }).waitFor();
    const listed = await asUser('GET', '/alarms');
    const alarms = listed.data.alarms as { wake_message: string; status: string }[];
    assert.deepEqual(
      alarms.filter((alarm) => alarm.wake_message === 'water the plants').map((alarm) => alarm.status),
      ['cancelled'],
    );
    await screenshotBoth(page, '11-alarm-cancelled');
  });

  it('shows spend per day and per intent, what the agent remembers (and forgets it), and the catalog', async () => {
    await page.goto(`${router}/console/#/spend`);
    await page.locator('[data-testid="spend-intents"] tr[data-intent]').first().waitFor();
    assert.ok((await page.locator('svg.chart rect.bar').count()) >= 1, 'a bar for today');
    await screenshotBoth(page, '12-spend');
    await page.goto(`${router}/console/#/memories`);
    const memory = page.locator('[data-testid="memories"] li', { hasText: 'The person likes trains.' });
    await memory.waitFor();
    await screenshotBoth(page, '13-memories');
    await memory.getByRole('button', { name: 'Forget “The person likes trains.”' }).click();
    await memory.waitFor({ state: 'detached' });
    await page.goto(`${router}/console/#/market`);
    await page.getByRole('heading', { name: 'Marketplace' }).waitFor();
    await page.getByText('No service is listed yet.').waitFor();
    await page.getByText('Your agent has not called any service yet.').waitFor();
    await screenshotBoth(page, '14-market');
  });

  it('shows the agent’s marketplace calls newest first, each receipt verified in the browser, and a tampered one failed', async () => {
    const serviceId = await publishListing(platform.url('marketplace'), translator.url);
    model.setScript(
      railScript({
        compile: compiled('translate hello into French'),
        plans: [{ steps: [toolStep('call', 'market.call', { service_id: serviceId, operation: 'translate', args: { text: 'hello' }, max_payment: '0.05' })] }],
        chat: () => ({ reply: 'I will call the translator once you approve.', task: 'translate hello into French', remember: [] }),
        answer: 'bonjour hello',
      }),
    );
    await page.goto(`${router}/console/#/chat`);
    await page.getByTestId('stream-state').getByText('Live').waitFor();
    await page.getByLabel('Message to your agent').fill('translate hello into French');
    await page.keyboard.press('Enter');
    // Money always asks: the paid call is a gate naming the most it may cost.
    const gate = page.locator('fieldset.gate', { hasText: 'pays up to 0.05' });
    await gate.waitFor();
    await gate.getByRole('button', { name: 'Approve' }).click();
    await page.locator('article.intent[data-status="completed"]', { hasText: 'bonjour hello' }).waitFor();
    assert.deepEqual(translator.calls, [{ operation: 'translate', args: { text: 'hello' } }]);

    await page.goto(`${router}/console/#/market`);
    const row = page.locator('[data-testid="invocations"] tbody tr', { hasText: 'French translator' });
    await row
      .locator('[data-receipt="verified"]')
      .getByText(/^✓ Receipt verified: signed by the marketplace \(0x/)
      .waitFor();
    assert.equal(await page.locator('[data-testid="invocations"] tbody tr').count(), 1);
    assert.match((await row.textContent()) ?? '', /translate.*succeeded.*0\.010000/);
    await screenshotBoth(page, '15-market-calls');

    // The same receipt with its amount changed on the way: the recovered signer is no longer the marketplace's.
    await page.route('**/invocations/*/receipt', async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      body.data.message.amount = '9000000';
      await route.fulfill({ response, json: body });
    });
    await page.reload();
    await row
      .locator('[data-receipt="failed"]')
      .getByText(/^✗ Receipt failed: signed by 0x[0-9a-fA-F]{40}, not by the marketplace’s signer 0x[0-9a-fA-F]{40}$/)
      .waitFor();
    await screenshotBoth(page, '16-market-receipt-tampered');
    await page.unroute('**/invocations/*/receipt');
  });

  it('follows the address changed while the console is starting: the address names the chat, so the chat shows', async () => {
    // The hash changes right after the console's first render (as a link followed while the page starts): in the
    // browser's next task, before an effect Preact runs after the paint. It once stayed on the view of the old address.
    await page.addInitScript(`{
      const hash = sessionStorage.getItem('test.hash-once-started');
      sessionStorage.removeItem('test.hash-once-started');
      if (hash !== null)
        new MutationObserver((_, observer) => {
          if (!document.getElementById('app')?.firstChild) return;
          observer.disconnect();
          location.hash = hash;
        }).observe(document, { childList: true, subtree: true });
    }`);
    assert.equal(new URL(page.url()).hash, '#/market');
    await page.evaluate(() => sessionStorage.setItem('test.hash-once-started', '#/chat'));
    await page.reload();
    await page.waitForURL(/#\/chat$/);
    await page.getByTestId('stream-state').getByText('Live').waitFor({ timeout: 10_000 });
    assert.equal(await page.getByRole('navigation', { name: 'Views' }).locator('[aria-current="page"]').textContent(), 'Chat');
    assert.equal(await page.getByRole('heading', { name: 'Your calls' }).count(), 0, 'the calls of the old address are not shown');
  });

  it('on a phone (390 px): no element overflows its box, every view is in sight in the navigation, the alarms are cards with their Cancel whole', async () => {
    await page.setViewportSize(phone);
    try {
      await page.goto(`${router}/console/#/alarms`);
      const message = 'water the tomatoes on the balcony before the sun is up';
      await page.getByLabel('Wake your agent with').fill(message);
      await page.getByLabel('Minutes', { exact: true }).fill('45');
      await page.getByRole('button', { name: 'Create alarm' }).click();
      const cancel = page.getByRole('button', { name: `Cancel the alarm “${message}”` });
      await cancel.waitFor();
      assert.ok(await inSight(cancel), 'the Cancel button is whole and in sight (it was cut to “Canc”)');
      const navigation = page.getByRole('navigation', { name: 'Views' });
      for (const [label, ready] of phoneViews) {
        const link = navigation.getByRole('link', { name: label, exact: true });
        assert.ok(await inSight(link), `${label} is in sight in the navigation`);
        await link.click();
        await ready(page).first().waitFor();
        assert.deepEqual(await page.locator('html').evaluate(overflowing as unknown as () => string[]), [], `on ${label} at 390 px`);
        await screenshot(page, `16-phone-${label.toLowerCase()}`);
      }
    } finally {
      await page.setViewportSize(desktop);
      // The next scenario walks the page with the keyboard from its top, not from the link clicked last.
      await page.reload();
    }
  });

  it('with the keyboard only: skips to the content, sends a message and answers a gate with its second option, focus always shown', async () => {
    // Two real choices: the one picked is the gate's answer, which the steps behind it and the final answer see.
    model.setScript(
      railScript({
        compile: compiled('book a train to Lyon'),
        plans: [gatedPlan(trainQuestion, ['the 7:10', 'the 9:40'])],
        chat: () => ({ reply: 'I will ask you which train.', task: 'book a train to Lyon', remember: [] }),
        answer: (request) => {
          const approved = /"approved":true,"answer":"([^"]*)"/.exec(request.user);
          return approved ? `Booked ${approved[1]}.` : 'Nothing booked: you said no.';
        },
      }),
    );
    await page.goto(`${router}/console/#/chat`);
    await page.getByTestId('stream-state').getByText('Live').waitFor();
    await page.keyboard.press('Tab');
    const skip = page.getByRole('link', { name: 'Skip to the main content' });
    assert.ok(await focusShown(skip), 'the first Tab stop is the skip link, its focus shown');
    await screenshot(page, '17a-skip-link-desktop');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    const composer = page.getByLabel('Message to your agent');
    assert.ok(await focusShown(composer), 'after the skip, the next Tab stop is the composer, its focus shown');
    await page.keyboard.type('a train to Lyon, please');
    await page.keyboard.press('Enter');
    const gate = page.locator('fieldset.gate', { hasText: trainQuestion });
    await gate.waitFor();
    assert.deepEqual(await gate.getByRole('button').allTextContents(), ['the 7:10', 'the 9:40', 'Deny']);
    const second = gate.getByRole('button', { name: 'the 9:40' });
    await tabTo(second, 30);
    assert.ok(await focusShown(second), 'the option has the focus, shown');
    // Shift+Tab goes back to the first option and Tab forward again: the options are in reading order.
    await page.keyboard.press('Shift+Tab');
    assert.ok(await focusShown(gate.getByRole('button', { name: 'the 7:10' })));
    await page.keyboard.press('Tab');
    await screenshotBoth(page, '17-gate-options-keyboard');
    assert.ok(await focusShown(second), 'still on the second option');
    await page.keyboard.press('Space');
    const intent = page.locator('article.intent[data-status="completed"]', { hasText: 'Booked the 9:40.' });
    await intent.getByTestId('gate-outcome').getByText('You chose “the 9:40”').waitFor();
    assert.equal(await intent.locator('li.step.done').count(), 2, 'the gate and the step behind it');
    await screenshotBoth(page, '18-gate-second-option');
  });

  it('denies a gate from the browser: the intent shows it denied, the step behind it not run', async () => {
    await page.getByLabel('Message to your agent').fill('another train to Lyon');
    await page.getByRole('button', { name: 'Send' }).click();
    const gate = page.locator('fieldset.gate', { hasText: trainQuestion });
    await gate.waitFor();
    await gate.getByRole('button', { name: 'Deny' }).click();
    const intent = page.locator('article.intent[data-status="completed"]', { hasText: 'Nothing booked: you said no.' });
    await intent.locator('[data-testid="gate-outcome"][data-status="denied"]').getByText('You denied it').waitFor();
    await intent.locator('li.step.denied').waitFor();
    assert.match((await intent.locator('li.step.skipped').textContent()) ?? '', /was not approved/);
    await screenshotBoth(page, '19-gate-denied');
    // The dark scheme, for the reader to look at (its contrast is checked by colour-contrast.test.ts).
    await page.emulateMedia({ colorScheme: 'dark' });
    await screenshotBoth(page, '20-gate-denied-dark');
    await page.emulateMedia({ colorScheme: null });
  });
});
