import { benchPreamble } from '@platform/testkit/bench-machine';
import { startPlatform } from '@platform/testkit/platform-up';
import { railScript } from '@platform/testkit/rail-script';
import { startScriptedModel } from '@platform/testkit/scripted-model';
import { p50, percentile } from '@platform/testkit/stats';
import { launchBrowser } from '../test/browser.ts';
import { firstLoadBytes, scriptBudgetBytes } from '../test/first-load-size.ts';

/*
 * The console's first load: bytes (what index.html makes the browser fetch, compressed as the router sends it) and
 * time to interactive in headless Chromium against `platform up`, signed in: from navigation to the chat's event
 * stream being live (the transcript loaded and the composer usable). Runs BENCH_RUNS loads (20) in fresh tabs, cold
 * (the HTTP cache disabled) and warm (assets cached).
 */

const runs = Number(process.env.BENCH_RUNS ?? 20);
const machine = await benchPreamble('console');
const bytes = firstLoadBytes();
const model = await startScriptedModel(railScript({}));
const platform = await startPlatform({ env: { GATEWAY_UPSTREAM_URL: model.url, SCHEDULER_DISPATCHER: 'false' } });
const router = platform.url('router');
const browser = await launchBrowser();

/** Signs in once through the real flow and returns the session the console keeps, to seed later tabs with. */
async function signIn(): Promise<string> {
  const page = await browser.context.newPage();
  await page.goto(`${router}/console/`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('stream-state').getByText('Live').waitFor();
  const session = (await page.evaluate(() => sessionStorage.getItem('console.session'))) as string;
  await page.close();
  return session;
}

/** One load: navigation start to the stream being live, and to DOMContentLoaded, in ms (the page's own clock). */
async function load(session: string, cold: boolean): Promise<{ interactive: number; domContentLoaded: number }> {
  const page = await browser.context.newPage();
  // Cold: nothing from the HTTP cache, as a first visit.
  if (cold) await (await browser.context.newCDPSession(page)).send('Network.setCacheDisabled', { cacheDisabled: true });
  await page.addInitScript((value) => sessionStorage.setItem('console.session', value), session);
  await page.goto(`${router}/console/#/chat`);
  await page.getByTestId('stream-state').getByText('Live').waitFor();
  // Evaluated in the page (its clock starts at navigation).
  const timing = (await page.evaluate(
    '({ interactive: performance.now(), domContentLoaded: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd })',
  )) as { interactive: number; domContentLoaded: number };
  await page.close();
  return timing;
}

try {
  const session = await signIn();
  const cold: number[] = [];
  const warm: number[] = [];
  const dcl: number[] = [];
  for (let run = 0; run < runs; run++) {
    const first = await load(session, true);
    cold.push(first.interactive);
    dcl.push(first.domContentLoaded);
    warm.push((await load(session, false)).interactive);
  }
  const row = (name: string, values: number[]) =>
    `| ${name} | ${p50(values).toFixed(0)} | ${percentile(
      [...values].sort((a, b) => a - b),
      90,
    ).toFixed(0)} | ${Math.max(...values).toFixed(0)} |`;
  console.log(`\nFirst-load bytes (what index.html fetches; the router sends brotli to browsers that accept it):`);
  console.log('| file | raw | gzip | brotli |');
  console.log('|---|---:|---:|---:|');
  for (const file of bytes.files) console.log(`| ${file.name} | ${file.raw} | ${file.gzip} | ${file.brotli} |`);
  console.log(`\nTime to interactive, ms (navigation to the chat's stream live; ${runs} loads each):`);
  console.log('| load | p50 | p90 | max |');
  console.log('|---|---:|---:|---:|');
  console.log(row('cold (no HTTP cache)', cold));
  console.log(row('cold, DOMContentLoaded', dcl));
  console.log(row('warm (assets cached)', warm));
  const tti = p50(cold);
  console.log(
    `\nTargets: JavaScript on the first load under ${scriptBudgetBytes / 1000} KB compressed: ${bytes.scriptGzip < scriptBudgetBytes ? '**met**' : '**not met**'} ` +
      `(${(bytes.scriptGzip / 1000).toFixed(1)} KB gzip, ${(bytes.scriptBrotli / 1000).toFixed(1)} KB brotli); ` +
      `interactive under 1000 ms: ${tti < 1000 ? '**met**' : '**not met**'} (${tti.toFixed(0)} ms p50)`,
  );
  if (!machine.reportable) console.log('(not reportable: the machine was busy)');
} finally {
  await browser.close();
  await platform.stop();
  await model.close();
}
