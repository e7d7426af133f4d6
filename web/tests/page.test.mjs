// Browser tests of the page: playwright-core driving Debian's chromium headless. The page is opened
// from file://, as a user opens it from disk. Each plan is set through the form, the page's peak is
// read back and compared with `trainmem estimate ... --json` for the same plan.
//   TRAINMEM_SITE (default build-web/site), TRAINMEM_CLI (default build/bin/trainmem),
//   TRAINMEM_SCREENSHOTS (default build-web/screenshots), CHROMIUM (default /usr/bin/chromium).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const site = path.resolve(root, process.env.TRAINMEM_SITE || 'build-web/site');
const cli = path.resolve(root, process.env.TRAINMEM_CLI || 'build/bin/trainmem');
const shots = path.resolve(root, process.env.TRAINMEM_SCREENSHOTS || 'build-web/screenshots');
const pageUrl = pathToFileURL(path.join(site, 'index.html')).href;

let browser;
const offsite = [];  // every request that is not the page's own files
const refusedByPolicy = [];  // Content-Security-Policy violations the browser reported

before(async () => {
  // launch() gives chromium a fresh temporary --user-data-dir of its own (and removes it).
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  fs.mkdirSync(shots, { recursive: true });
});

after(async () => {
  await browser?.close();
});

async function openPage(options = {}, url = pageUrl) {
  const context = await browser.newContext(options);
  // Interception: anything that is not a file of the site is recorded and refused.
  await context.route('**/*', (route) => {
    const u = route.request().url();
    if (u.startsWith(pathToFileURL(site).href)) return route.continue();
    offsite.push(u);
    return route.abort();
  });
  const page = await context.newPage();
  page.setDefaultTimeout(10000);
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) refusedByPolicy.push(m.text());
  });
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  page.jsErrors = errors;
  return page;
}

// Sets the form from a plan of the command line's flags, then runs one update.
async function setPlan(page, plan) {
  // Fields the plan leaves out are set to the command line's defaults for its framework and
  // method, read from the engine.
  const profile = { framework: plan.framework || 'hf', method: plan.method || 'full' };
  const defaults = await page.evaluate((pl) => window.trainmemPage.call({ op: 'form', plan: pl }).defaults,
    profile);
  const p = { ...defaults, batch: '1', ...plan };
  if (p.preset) {
    await page.check('input[name=source][value=preset]');
    await page.selectOption('#preset', p.preset);
  } else if (p.config) {
    await page.check('input[name=source][value=config]');
    await page.fill('#config', p.config);
  }
  await page.selectOption('#method', p.method);
  await page.selectOption('#framework', p.framework);
  await page.evaluate(() => window.trainmemPage.update());  // shows the method's own controls
  // As a user would: only the controls on screen (the method's) are set.
  for (const k of ['optimizer', 'optimizer_impl', 'precision', 'checkpointing', 'attention', 'loss', 'quant']) {
    if (await page.isVisible(`#${k}`)) await page.selectOption(`#${k}`, p[k]);
  }
  for (const k of ['compile', 'padding_mask', 'keep_outputs', 'use_cache']) {
    await page.setChecked(`#${k}`, p[k] === true);
  }
  for (const k of ['batch', 'seq', 'grad_accum', 'lora_rank', 'lora_targets', 'lora_dropout']) {
    if (await page.isVisible(`#${k}`)) await page.fill(`#${k}`, String(p[k]));
  }
  await setGpus(page, plan.layout || {});
  if (p.memory) {
    await page.selectOption('#device', 'custom');
    const [, n, unit] = /^([\d.]+)(\w+)$/.exec(p.memory);
    await page.fill('#memory', n);
    await page.selectOption('#memory_unit', unit);
  } else {
    await page.selectOption('#device', p.gpu || 'none');
  }
  await page.evaluate(() => window.trainmemPage.update());
}

// The GPUs section: GPUs per node, nodes, sharding, offload, tensor and pipeline parallel; what
// `layout` leaves out is one GPU's default.
async function setGpus(page, layout) {
  const l = { gpus: 1, nodes: 1, sharding: 'none', offload: 'none', tp: 1, pp: 1, ...layout };
  for (const k of ['gpus', 'nodes', 'tp', 'pp']) await page.fill(`#${k}`, String(l[k]));
  await page.selectOption('#sharding', l.sharding);
  await page.evaluate(() => window.trainmemPage.update());  // shows the offload choice with sharding
  if (await page.isVisible('#offload')) await page.selectOption('#offload', l.offload);
}

// Waits until the sweeps and the advice of the last change are drawn.
async function settle(page) {
  await page.waitForFunction(() => document.body.dataset.settled === 'true');
}

async function readPage(page) {
  return page.evaluate(() => ({
    peak: Number(document.getElementById('peak')?.dataset.bytes),
    word: document.getElementById('verdict-word')?.textContent || null,
    judged: Number(document.getElementById('verdict-word')?.dataset.bytes),
    error: document.getElementById('error').hidden ? null : document.getElementById('error').textContent,
    command: document.getElementById('command').textContent,
    phase: document.getElementById('peak-phase')?.textContent || '',
    ms: Number(document.body.dataset.updateMs),
    notes: [...document.querySelectorAll('#notes li')].map((li) => li.textContent),
  }));
}

function cliArgs(plan) {
  const args = ['estimate', plan.preset || plan.model];
  for (const [k, v] of Object.entries(plan)) {
    if (['preset', 'model', 'config', 'layout', 'flags'].includes(k)) continue;
    if (v === true) {  // a switch: --compile, --padding-mask
      args.push(`--${k.replace(/_/g, '-')}`);
      continue;
    }
    args.push(`--${k.replace(/_/g, '-')}`, String(v));
  }
  return args;
}

function cliJson(args) {
  return JSON.parse(execFileSync(cli, [...args, '--json'], { encoding: 'utf8' }));
}

// The page's "copy the command" text, split as a shell would (single quotes only are used).
function splitCommand(text) {
  const out = [];
  for (const m of text.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)) out.push(m[1] !== undefined ? m[1].replace(/'\\''/g, "'") : m[2]);
  return out;
}

const qwen3TinyConfig = fs.readFileSync(path.join(root, 'validation/configs/qwen3-tiny.json'), 'utf8');

const PLANS = [
  { preset: 'qwen2.5-1.5b', batch: 4, seq: 1024, gpu: 'rtx-4090' },
  { preset: 'qwen3-8b', method: 'lora', lora_rank: 16, lora_dropout: 0.1, optimizer_impl: 'fused', gpu: 'rtx-4090' },
  { preset: 'qwen3-8b', method: 'qlora', lora_rank: 64, lora_targets: 'all-linear', quant: 'nf4', gpu: 'a100-40gb' },
  { preset: 'llama-3.1-8b', batch: 8, seq: 2048, checkpointing: 'full', gpu: 'h100-sxm' },
  { preset: 'qwen3-30b-a3b', method: 'qlora', batch: 2, seq: 2048, gpu: 'm3-max-64gb' },
  { preset: 'gpt2', precision: 'fp32', optimizer: 'sgd', batch: 16, seq: 512, gpu: 'tier-8gb' },
  { preset: 'mistral-7b-v0.1', method: 'lora', optimizer: 'adamw-8bit', checkpointing: 'selective',
    loss: 'chunked', attention: 'flash', batch: 2, seq: 4096, memory: '24GB' },
  { preset: 'qwen3-0.6b', precision: 'bf16', optimizer: 'lion', grad_accum: 4, batch: 8, seq: 2048 },
  { preset: 'gemma-2-9b', method: 'qlora', quant: 'fp4', lora_rank: 8, attention: 'eager', gpu: 'rtx-3090' },
  { preset: 'phi-3-mini-4k-instruct', method: 'lora', loss: 'fused', batch: 4, seq: 4096, memory: '39.5GiB' },
  // Framework profiles and behaviour switches (docs/frameworks.md).
  { preset: 'llama-3.1-8b', method: 'lora', framework: 'torchtune', compile: true, batch: 2, seq: 2048,
    gpu: 'rtx-4090' },
  { preset: 'qwen3-8b', method: 'qlora', framework: 'litgpt', padding_mask: true, gpu: 'a100-40gb' },
  // A custom loop (PEFT's method comparison): the output and its KV cache kept into the next step.
  { preset: 'llama-3.2-3b', method: 'lora', lora_targets: 'q,v', padding_mask: true, keep_outputs: true,
    use_cache: true, batch: 4, seq: 512, gpu: 'l40s' },
];

test('the page prices each plan exactly as `trainmem estimate --json` does', async () => {
  const page = await openPage();
  for (const plan of PLANS) {
    await setPlan(page, plan);
    const got = await readPage(page);
    assert.equal(got.error, null, `${JSON.stringify(plan)}: ${got.error}`);
    const want = cliJson(cliArgs(plan));
    assert.equal(got.peak, want.totals.peak_bytes, `peak of ${JSON.stringify(plan)}`);
    assert.ok(got.phase.includes(want.totals.peak_phase.replace(/_/g, ' ')), got.phase);
    // The report's notes, as the command line says them (the defaults the plan took, what it
    // means on this model and device).
    assert.deepEqual(got.notes, want.notes, `notes of ${JSON.stringify(plan)}`);
    if (want.fit) {
      assert.equal(got.word !== 'Does not fit', want.fit.fits, `verdict of ${JSON.stringify(plan)}`);
      assert.equal(got.judged, want.fit.peak_bytes, `the figure judged for ${JSON.stringify(plan)}`);
    }
    // The command the page offers prices the same plan.
    const [prog, ...args] = splitCommand(got.command);
    assert.equal(prog, 'trainmem');
    assert.equal(cliJson(args).totals.peak_bytes, want.totals.peak_bytes, got.command);
  }
  assert.deepEqual(page.jsErrors, []);
  await page.context().close();
});

test('a pasted config.json is priced as the command line prices the file', async () => {
  const page = await openPage();
  await setPlan(page, { config: qwen3TinyConfig, method: 'lora', batch: 2, seq: 512, gpu: 't4' });
  const got = await readPage(page);
  assert.equal(got.error, null);
  const want = cliJson(cliArgs({ model: path.join(root, 'validation/configs/qwen3-tiny.json'),
    method: 'lora', batch: 2, seq: 512, gpu: 't4' }));
  assert.equal(got.peak, want.totals.peak_bytes);
  await page.context().close();
});

// A tiny GPT-2 folder: config.json and one safetensors file of zero weights.
function tinyGpt2Folder() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'trainmem-tiny-gpt2-'));
  const E = 64, L = 2, V = 1000, P = 128;
  fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ model_type: 'gpt2', n_embd: E,
    n_head: 4, n_layer: L, n_positions: P, n_ctx: P, n_inner: null, vocab_size: V, activation_function: 'gelu_new' }));
  const tensors = [['wte.weight', [V, E]], ['wpe.weight', [P, E]], ['ln_f.weight', [E]], ['ln_f.bias', [E]]];
  for (let i = 0; i < L; i++) {
    tensors.push([`h.${i}.ln_1.weight`, [E]], [`h.${i}.ln_1.bias`, [E]], [`h.${i}.attn.c_attn.weight`, [E, 3 * E]],
      [`h.${i}.attn.c_attn.bias`, [3 * E]], [`h.${i}.attn.c_proj.weight`, [E, E]], [`h.${i}.attn.c_proj.bias`, [E]],
      [`h.${i}.ln_2.weight`, [E]], [`h.${i}.ln_2.bias`, [E]], [`h.${i}.mlp.c_fc.weight`, [E, 4 * E]],
      [`h.${i}.mlp.c_fc.bias`, [4 * E]], [`h.${i}.mlp.c_proj.weight`, [4 * E, E]], [`h.${i}.mlp.c_proj.bias`, [E]]);
  }
  const header = {};
  let offset = 0;
  for (const [name, shape] of tensors) {
    const bytes = shape.reduce((a, b) => a * b, 1) * 4;
    header[name] = { dtype: 'F32', shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.writeFileSync(path.join(dir, 'model.safetensors'), Buffer.concat([len, Buffer.from(json), Buffer.alloc(offset)]));
  return dir;
}

test('a model folder is read from its safetensors headers, as the command line reads it', async () => {
  const dir = tinyGpt2Folder();
  const page = await openPage();
  await page.check('input[name=source][value=folder]');
  await page.setInputFiles('#folder-input', dir);
  await page.waitForFunction(() => /safetensors header/.test(document.getElementById('folder-status').textContent));
  await setPlan(page, { batch: 4, seq: 128, gpu: 'rtx-3060-12gb' });
  const got = await readPage(page);
  assert.equal(got.error, null);
  const want = cliJson(cliArgs({ model: dir, batch: 4, seq: 128, gpu: 'rtx-3060-12gb' }));
  assert.equal(got.peak, want.totals.peak_bytes);
  assert.equal(want.model.source, 'safetensors headers');
  const status = await page.textContent('#folder-status');
  assert.match(status, /1 safetensors header\(s\)/);
  // Only the header was read, never the weights.
  const read = Number(/([\d,]+) bytes read/.exec(status)[1].replace(/,/g, ''));
  assert.ok(read < 4096, status);
  // Then a folder without config.json: the page says so and prices nothing, not the first
  // folder's config that the config box still holds, even after another change.
  const bare = fs.mkdtempSync(path.join(os.tmpdir(), 'trainmem-no-config-'));
  fs.copyFileSync(path.join(dir, 'model.safetensors'), path.join(bare, 'model.safetensors'));
  await page.setInputFiles('#folder-input', bare);
  await page.waitForFunction(() => !document.getElementById('error').hidden);
  await page.fill('#batch', '2');
  await page.evaluate(() => window.trainmemPage.update());
  const refused = await readPage(page);
  assert.match(refused.error || '', /config\.json: not in the folder/);
  assert.ok(Number.isNaN(refused.peak), `priced ${refused.peak} with no model`);
  await page.context().close();
  fs.rmSync(dir, { recursive: true, force: true });
  fs.rmSync(bare, { recursive: true, force: true });
});

test('the share link reopens the same plan', async () => {
  const page = await openPage();
  const plan = { preset: 'qwen3-8b', method: 'qlora', lora_rank: 32, lora_targets: 'q,v', batch: 3,
    seq: 3072, checkpointing: 'full', memory: '20GB' };
  await setPlan(page, plan);
  const before = await readPage(page);
  const link = await page.inputValue('#share-link');
  assert.ok(link.startsWith(pageUrl + '#'), link);
  const state = () => page.evaluate(() => [...document.querySelectorAll('#plan input, #plan select, #plan textarea')]
    .map((e) => (e.type === 'checkbox' || e.type === 'radio' ? e.checked : e.value)));
  const formBefore = await state();
  const other = await openPage({}, link);
  const after = await readPage(other);
  assert.equal(after.peak, before.peak);
  assert.equal(after.command, before.command);
  assert.deepEqual(await other.evaluate(() => [...document.querySelectorAll('#plan input, #plan select, #plan textarea')]
    .map((e) => (e.type === 'checkbox' || e.type === 'radio' ? e.checked : e.value))), formBefore);
  assert.equal(await other.inputValue('#share-link'), link);
  await page.context().close();
  await other.context().close();
});

test('a bad config.json shows a clear error naming the file and the reason', async () => {
  const page = await openPage();
  await setPlan(page, { config: '{"model_type": "llama", "hidden_size": ', gpu: 'rtx-4090' });
  let got = await readPage(page);
  assert.match(got.error, /config\.json: not valid JSON/);
  assert.ok(Number.isNaN(got.peak), 'no peak is shown for a bad config');
  assert.equal(await page.getAttribute('#config', 'aria-invalid'), 'true');
  assert.equal(await page.isVisible('#report'), false, 'no stale results beside an error');
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: path.join(shots, 'error.png'), fullPage: false });
  await setPlan(page, { config: '{"hidden_size": 64}', gpu: 'rtx-4090' });
  got = await readPage(page);
  assert.match(got.error, /config\.json: model_type: is missing/);
  // An unknown model_type is priced (activations estimated), so a nonsense value stands in here.
  await setPlan(page, {
    config: qwen3TinyConfig.replace('"num_hidden_layers": 4', '"num_hidden_layers": -1'),
    gpu: 'rtx-4090',
  });
  got = await readPage(page);
  assert.match(got.error, /num_hidden_layers/);
  // A bad value in the form names the flag.
  await setPlan(page, { preset: 'gpt2', batch: 0 });
  got = await readPage(page);
  assert.match(got.error, /--batch/);
  assert.equal(await page.getAttribute('#batch', 'aria-invalid'), 'true');
  // Every control a flag names is marked, underscores or not: --lora-dropout is #lora_dropout.
  await setPlan(page, { preset: 'gpt2', method: 'lora', lora_dropout: 1.5 });
  got = await readPage(page);
  assert.match(got.error, /--lora-dropout/);
  assert.equal(await page.getAttribute('#lora_dropout', 'aria-invalid'), 'true');
  assert.equal(await page.getAttribute('#batch', 'aria-invalid'), null);
  await page.context().close();
});

test('clicking a line shows its arithmetic', async () => {
  const page = await openPage();
  await setPlan(page, { preset: 'qwen2.5-1.5b', batch: 4, gpu: 'rtx-4090' });
  const want = cliJson(cliArgs({ preset: 'qwen2.5-1.5b', batch: 4, gpu: 'rtx-4090' }));
  await page.click('#lines button.line >> nth=0');
  const text = await page.textContent('#explain');
  assert.ok(text.includes(want.items[0].formula), text);
  assert.ok(text.includes(want.items[0].bytes.toLocaleString('en-US')), text);
  await page.context().close();
});

test('each update takes well under 50 ms; screenshots of the main states', async () => {
  const page = await openPage({ viewport: { width: 1280, height: 1000 } });
  await setPlan(page, { preset: 'qwen3-8b', method: 'lora', batch: 4, seq: 2048, gpu: 'rtx-4090' });
  const first = [];
  const full = [];
  for (let b = 1; b <= 16; b++) {
    const n = await page.evaluate(() => Number(document.body.dataset.fullUpdates || 0));
    await page.fill('#batch', String(b));
    await page.waitForFunction((k) => Number(document.body.dataset.fullUpdates) > k, n);
    const ms = await page.evaluate(() => [Number(document.body.dataset.updateMs), Number(document.body.dataset.fullUpdateMs)]);
    first.push(ms[0]);
    full.push(ms[1]);
  }
  const median = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
  const report = { changes: first.length, first_paint_median_ms: median(first), first_paint_max_ms: Math.max(...first),
    with_sweeps_and_advice_median_ms: median(full), with_sweeps_and_advice_max_ms: Math.max(...full) };
  console.log(`update times: ${JSON.stringify(report)}`);
  fs.writeFileSync(path.join(shots, 'update-times.json'), `${JSON.stringify(report, null, 2)}\n`);
  // The verdict, budget, lines and timeline are redrawn within 50 ms of a change.
  assert.ok(report.first_paint_median_ms < 50, JSON.stringify(report));

  // The advice list is the command line's, in its order.
  await page.fill('#batch', '16');
  await page.evaluate(() => window.trainmemPage.update());
  await page.waitForFunction(() => document.querySelectorAll('#advice li').length > 0);
  const advice = JSON.parse(execFileSync(cli, ['advise', 'qwen3-8b', '--method', 'lora', '--batch', '16', '--seq', '2048',
    '--gpu', 'rtx-4090', '--json'], { encoding: 'utf8' }));
  const shown = await page.$$eval('#advice li strong', (es) => es.map((e) => e.textContent));
  assert.ok(shown.length > 0);
  assert.equal(shown[0], advice.options.find((o) => o.fits).change);
  assert.equal(await page.locator('#charts svg').count(), 2);
  assert.equal(await page.locator('#charts svg line.limit').count(), 2);
  // Each batch point is judged by the figure the verdict judges, as `trainmem sweep` judges it.
  const sweep = JSON.parse(execFileSync(cli, ['sweep', 'qwen3-8b', '--over', 'batch', '--method', 'lora',
    '--batch', '16', '--seq', '2048', '--gpu', 'rtx-4090', '--json'], { encoding: 'utf8' }));
  const batchChart = page.locator('#charts svg').first();
  assert.equal(await batchChart.locator('path.judged').count(), 1);
  assert.equal(await batchChart.locator('circle.over').count(), sweep.points.filter((p) => !p.fits).length);
  assert.equal(await batchChart.locator('circle.fits').count(), sweep.points.filter((p) => p.fits).length);
  await page.fill('#batch', '4');
  await page.evaluate(() => window.trainmemPage.update());
  await settle(page);
  await page.screenshot({ path: path.join(shots, 'light.png'), fullPage: true });
  await page.context().close();

  const dark = await openPage({ viewport: { width: 1280, height: 1000 }, colorScheme: 'dark' });
  await setPlan(dark, { preset: 'llama-3.1-8b', batch: 4, seq: 2048, checkpointing: 'full', gpu: 'a100-80gb' });
  await settle(dark);
  await dark.screenshot({ path: path.join(shots, 'dark.png'), fullPage: true });
  await dark.context().close();

  const phone = await openPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
  await setPlan(phone, { preset: 'qwen3-8b', method: 'qlora', batch: 2, seq: 2048, gpu: 'rtx-3060-12gb' });
  await settle(phone);
  await phone.evaluate(() => document.getElementById('method').scrollIntoView());
  await phone.screenshot({ path: path.join(shots, 'phone.png'), fullPage: false });
  await phone.evaluate(() => document.getElementById('results').scrollIntoView());
  await phone.screenshot({ path: path.join(shots, 'phone-results.png'), fullPage: false });
  await phone.context().close();
});

test('every control has a label, results are announced, the keyboard drives the form', async () => {
  const page = await openPage();
  const unlabelled = await page.$$eval('input, select, textarea',
    (es) => es.filter((e) => !e.labels || e.labels.length === 0).map((e) => e.id || e.name));
  assert.deepEqual(unlabelled, []);
  assert.equal(await page.getAttribute('#verdict', 'aria-live'), 'polite');
  assert.equal(await page.getAttribute('#error', 'role'), 'alert');
  // Keyboard only: focus the micro-batch, raise it with the arrow key; the peak follows.
  await setPlan(page, { preset: 'qwen3-0.6b', batch: 2, gpu: 'rtx-4090' });
  const before = (await readPage(page)).peak;
  await page.focus('#batch');
  const n = await page.evaluate(() => Number(document.body.dataset.updates));
  await page.keyboard.press('ArrowUp');
  await page.waitForFunction((k) => Number(document.body.dataset.updates) > k, n);
  const after = await readPage(page);
  assert.equal(after.peak, cliJson(cliArgs({ preset: 'qwen3-0.6b', batch: 3, gpu: 'rtx-4090' })).totals.peak_bytes);
  assert.ok(after.peak > before);
  // A ledger line opens its arithmetic from the keyboard.
  await page.focus('#lines button.line >> nth=1');
  await page.keyboard.press('Enter');
  assert.match(await page.textContent('#explain'), /Arithmetic: /);
  await page.context().close();
});

test('on a phone the page fits the screen width', async () => {
  const page = await openPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  await setPlan(page, { preset: 'llama-3.1-8b', method: 'lora', gpu: 'rtx-4090' });
  await settle(page);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(width <= 390, `page is ${width} px wide`);
  // The bar at the bottom quotes the figure the verdict judged (on a CUDA card the device total).
  const { judged } = await readPage(page);
  const summary = await page.textContent('#summary');
  assert.match(summary, /device total/);
  const units = await page.evaluate(() => window.trainmemPage.fmtBytes(
    Number(document.getElementById('verdict-word').dataset.bytes), 'GiB'));
  assert.ok(summary.includes(units), `${summary} should quote ${units} (${judged} B)`);
  await page.context().close();
});

// A length typed as the command line takes it ("4k") is priced as 4,096 tokens, the budget bar
// stacks the allocator's cache and the CUDA context on the peak, and an empty LoRA dropout is an
// error rather than 0.
test('typed lengths, the device-total bar and an empty dropout', async () => {
  const page = await openPage();
  await setPlan(page, { preset: 'qwen2.5-1.5b', method: 'lora', gpu: 'rtx-4090', seq: '4k' });
  const page4k = await readPage(page);
  const cli = cliJson(['estimate', 'qwen2.5-1.5b', '--method', 'lora', '--gpu', 'rtx-4090',
    '--batch', '1', '--seq', '4096']);
  assert.equal(page4k.error, null);
  assert.equal(page4k.peak, cli.totals.peak_bytes);
  assert.equal(await page.locator('#budget .bar .gpu-extra').count(), 1);
  // The allocator replay's figures, as the command line's "On the GPU" block prints them.
  const gpuText = await page.textContent('#gpu');
  const fmt = (b) => page.evaluate((x) => window.trainmemPage.fmtBytes(x, 'GiB'), b);
  assert.ok(gpuText.includes(`peak reserved ${await fmt(cli.gpu.peak_reserved_bytes)}`), gpuText);
  assert.ok(gpuText.includes(`device total ${await fmt(cli.gpu.device_total_bytes)}`), gpuText);
  await page.fill('#lora_dropout', '');
  await page.evaluate(() => window.trainmemPage.update());
  assert.match((await readPage(page)).error || '', /lora.dropout/i);
  await page.context().close();
});

// A link naming values the form has no choice for (a renamed GPU, a misspelt method) keeps each
// field's default and says which value it passed over, instead of a blank select and no device.
test('a link with unknown values falls back and says so', async () => {
  const page = await openPage({}, `${pageUrl}#preset=foo&device=nonexistent&method=bogus`);
  await settle(page);
  const r = await readPage(page);
  assert.equal(r.error, null);
  assert.ok(r.word, 'a verdict on the default device');
  for (const [k, v] of [['preset', 'foo'], ['device', 'nonexistent'], ['method', 'bogus']]) {
    assert.ok(r.notes.some((n) => n.includes(`The link names ${k} '${v}'`)), `${k}: ${r.notes.join(' | ')}`);
  }
  await page.context().close();
});

test('the page made no network request', () => {
  assert.deepEqual(offsite, []);
  // The engine is embedded as a data: URL, which its loader fetches; the policy allows that and
  // nothing else, so the browser refused nothing.
  assert.deepEqual(refusedByPolicy, []);
});

// A framework's profile sets defaults (docs/frameworks.md): the fields the user left move to them,
// so the form shows what is priced; one the user sets back is sent, and the link keeps it.
test("the form follows a framework's defaults, and a field set against them is priced", async () => {
  const page = await openPage();
  await page.selectOption('#method', 'lora');
  await page.selectOption('#framework', 'torchtune');
  await page.evaluate(() => window.trainmemPage.update());
  assert.equal(await page.inputValue('#checkpointing'), 'full');
  assert.equal(await page.inputValue('#precision'), 'bf16');
  let command = await page.evaluate(() => window.trainmemPage.commandFor());
  assert.equal(command, 'trainmem estimate qwen2.5-1.5b --method lora --batch 4 --framework torchtune --gpu rtx-4090');
  await page.selectOption('#checkpointing', 'none');
  await page.evaluate(() => window.trainmemPage.update());
  command = await page.evaluate(() => window.trainmemPage.commandFor());
  assert.match(command, /--checkpointing none/);
  const got = await readPage(page);
  const want = cliJson(['estimate', 'qwen2.5-1.5b', '--method', 'lora', '--framework', 'torchtune',
    '--checkpointing', 'none', '--batch', '4', '--gpu', 'rtx-4090']);
  assert.equal(got.peak, want.totals.peak_bytes);
  const other = await openPage({}, await page.inputValue('#share-link'));
  assert.equal(await other.inputValue('#checkpointing'), 'none');
  assert.equal((await readPage(other)).peak, got.peak);
  // Back to hf: the fields still at torchtune's defaults return to the HF Trainer's.
  await page.selectOption('#framework', 'hf');
  await page.evaluate(() => window.trainmemPage.update());
  assert.equal(await page.inputValue('#precision'), 'bf16');  // LoRA's bf16 base under hf too
  assert.equal(await page.inputValue('#checkpointing'), 'none');
  assert.deepEqual(page.jsErrors, []);
  await page.context().close();
  await other.context().close();
});

test("the form starts at the command line's defaults and lists the engine's names", async () => {
  const page = await openPage();
  const form = await page.evaluate(() => window.trainmemPage.call({ op: 'form' }));
  assert.equal(await page.inputValue('#optimizer_impl'), form.defaults.optimizer_impl);
  assert.equal(form.defaults.optimizer_impl, 'fused');  // the HF Trainer's adamw_torch_fused
  const names = await page.$$eval('#precision option', (os) => os.map((o) => o.value));
  assert.deepEqual(names, form.choices.precision.map((t) => t.name));
  // Only the example's batch differs from the defaults, so the command names only that.
  const command = await page.evaluate(() => window.trainmemPage.commandFor());
  assert.equal(command, 'trainmem estimate qwen2.5-1.5b --batch 4 --gpu rtx-4090');
  await page.context().close();
});

// PYTORCH_ALLOC_CONF and the torch build's CUDA runtime, as --alloc-conf and --versions cuda=
// give them: the replay's reserved figure, the CUDA context and the offered command follow them.
test('the allocator configuration and the CUDA runtime price as the flags do', async () => {
  const page = await openPage();
  await setPlan(page, { preset: 'qwen2.5-1.5b', method: 'lora', gpu: 'a100-80gb', seq: '2048' });
  await page.fill('#alloc_conf', 'expandable_segments:True');
  await page.selectOption('#cuda', '11.8');
  await page.evaluate(() => window.trainmemPage.update());
  const got = await readPage(page);
  assert.equal(got.error, null);
  const want = cliJson(['estimate', 'qwen2.5-1.5b', '--method', 'lora', '--gpu', 'a100-80gb',
    '--batch', '1', '--seq', '2048', '--alloc-conf', 'expandable_segments:True',
    '--versions', 'cuda=11.8']);
  assert.equal(got.judged, want.fit.peak_bytes);
  const fmt = (b) => page.evaluate((x) => window.trainmemPage.fmtBytes(x, 'GiB'), b);
  const gpuText = await page.textContent('#gpu');
  assert.ok(gpuText.includes(`peak reserved ${await fmt(want.gpu.peak_reserved_bytes)}`), gpuText);
  assert.ok(gpuText.includes(`CUDA context ${await fmt(want.gpu.context_bytes)}`), gpuText);
  assert.ok(gpuText.includes('allocator settings expandable_segments:True'), gpuText);
  assert.match(got.command, /--alloc-conf expandable_segments:True/);
  assert.match(got.command, /--versions cuda=11\.8/);
  // CUDA 11.8 prices PR #86509's 287 MB context plus the 240 MiB of kernels a training step
  // loads lazily, not the default runtime's.
  assert.equal(want.gpu.context_bytes, 287000000 + 240 * 2 ** 20);
  // A malformed configuration is refused naming the field, as the command line refuses it.
  await page.fill('#alloc_conf', 'expandable_segments:maybe');
  await page.evaluate(() => window.trainmemPage.update());
  assert.match((await readPage(page)).error || '', /alloc.conf|PYTORCH_CUDA_ALLOC_CONF/i);
  assert.deepEqual(page.jsErrors, []);
  await page.context().close();
});

// Across GPUs: the GPUs section set through the form (`layout`), and the command line's layout
// flags for the same layout written out by hand (`flags`), so the page's own mapping is checked.
const LAYOUTS = [
  { preset: 'llama-3.1-8b', batch: 1, seq: 2048, checkpointing: 'full', gpu: 'a100-40gb',
    layout: { gpus: 8, sharding: 'zero3' }, flags: ['--gpus', '8', '--zero', '3'] },
  { preset: 'llama-3.1-8b', batch: 4, seq: 2048, gpu: 'a100-40gb',
    layout: { gpus: 8, sharding: 'zero3' }, flags: ['--gpus', '8', '--zero', '3'] },
  { preset: 'qwen3-8b', method: 'lora', batch: 2, seq: 2048, gpu: 'rtx-4090',
    layout: { gpus: 4, nodes: 2, sharding: 'fsdp-full', offload: 'both' },
    flags: ['--gpus', '4', '--nodes', '2', '--fsdp', 'full', '--offload', 'both'] },
  { preset: 'qwen3-8b', batch: 2, seq: 1024, gpu: 'h100-sxm',
    layout: { gpus: 8, nodes: 2, sharding: 'fsdp-hybrid' }, flags: ['--gpus', '8', '--nodes', '2', '--fsdp', 'hybrid'] },
  { preset: 'qwen3-8b', batch: 1, layout: { gpus: 8, sharding: 'fsdp-grad-op' }, flags: ['--gpus', '8', '--fsdp', 'grad-op'] },
  // Tensor and pipeline parallel without sharding: Megatron-LM, two pipeline stages.
  { preset: 'llama-3.1-8b', batch: 2, seq: 4096, checkpointing: 'full', gpu: 'h100-sxm',
    layout: { gpus: 8, tp: 2, pp: 2 }, flags: ['--gpus', '8', '--tp', '2', '--pp', '2'] },
  // One GPU with ZeRO-Offload is a layout too.
  { preset: 'qwen2.5-1.5b', batch: 4, gpu: 'rtx-4090', layout: { sharding: 'zero2', offload: 'optimizer' },
    flags: ['--zero', '2', '--offload', 'optimizer'] },
];

async function readLayout(page) {
  return page.evaluate(() => ({
    shown: !document.getElementById('layout').hidden,
    ranks: [...document.querySelectorAll('#ranks tbody tr')].map((tr) => ({
      name: tr.cells[0].textContent, gpus: Number(tr.cells[1].textContent),
      peak: Number(tr.cells[2].dataset.bytes), most: tr.classList.contains('most-loaded') })),
    host: Number(document.getElementById('host-peak')?.dataset.bytes),
    hostLines: document.querySelectorAll('#host tbody tr').length,
    mostLoaded: document.getElementById('most-loaded')?.textContent || '',
  }));
}

test('across GPUs the page prices each layout as `trainmem estimate --gpus N ... --json` does', async () => {
  const page = await openPage();
  for (const plan of LAYOUTS) {
    await setPlan(page, plan);
    const got = await readPage(page);
    const what = JSON.stringify(plan);
    assert.equal(got.error, null, `${what}: ${got.error}`);
    const want = cliJson([...cliArgs(plan), ...plan.flags]);
    assert.equal(want.schema, 'trainmem.distributed/1', what);
    // The most-loaded rank's peak and the figure its verdict judges, per GPU.
    assert.equal(got.peak, want.totals.peak_bytes, `peak per GPU of ${what}`);
    assert.equal(got.peak, want.ranks[want.most_loaded.index].peak_bytes, what);
    assert.ok(got.phase.includes(want.totals.peak_phase.replace(/_/g, ' ')), got.phase);
    assert.deepEqual(got.notes, want.notes, `notes of ${what}`);
    if (want.fit) {
      assert.equal(got.word !== 'Does not fit', want.fit.fits, `verdict of ${what}`);
      assert.equal(got.judged, want.fit.peak_bytes, `the figure judged for ${what}`);
    } else {
      assert.equal(got.word, null, what);
    }
    // Every class of ranks (one per pipeline stage) and the host memory per node.
    const layout = await readLayout(page);
    assert.ok(layout.shown, what);
    assert.ok(layout.mostLoaded.includes(want.layout.describe), layout.mostLoaded);
    assert.deepEqual(layout.ranks.map((r) => [r.gpus, r.peak, r.most]),
      want.ranks.map((r, i) => [r.ranks, r.peak_bytes, i === want.most_loaded.index]), what);
    assert.equal(layout.host, want.host_per_node.peak_bytes, `host per node of ${what}`);
    assert.equal(layout.hostLines, want.host_per_node.items.length, what);
    // The command the page offers carries the layout flags and prices the same layout.
    for (let i = 0; i < plan.flags.length; i += 2) {
      assert.ok(got.command.includes(`${plan.flags[i]} ${plan.flags[i + 1]}`), `${got.command} lacks ${plan.flags[i]}`);
    }
    const [prog, ...args] = splitCommand(got.command);
    assert.equal(prog, 'trainmem');
    const again = cliJson(args);
    assert.equal(again.schema, 'trainmem.distributed/1', got.command);
    assert.equal(again.totals.peak_bytes, want.totals.peak_bytes, got.command);
  }
  // The share link reopens the layout.
  await setPlan(page, LAYOUTS[2]);
  const before = await readPage(page);
  const other = await openPage({}, await page.inputValue('#share-link'));
  const after = await readPage(other);
  assert.equal(after.peak, before.peak);
  assert.equal(after.command, before.command);
  assert.equal(await other.inputValue('#sharding'), 'fsdp-full');
  assert.equal(await other.inputValue('#offload'), 'both');
  assert.deepEqual(page.jsErrors, []);
  await page.context().close();
  await other.context().close();
});

test('across GPUs the sweeps and the advice are per GPU, as the command line gives them', async () => {
  const page = await openPage({ viewport: { width: 1280, height: 1000 } });
  const plan = { preset: 'llama-3.1-8b', batch: 8, seq: 4096, gpu: 'rtx-4090',
    layout: { gpus: 8, sharding: 'zero3' }, flags: ['--gpus', '8', '--zero', '3'] };
  await setPlan(page, plan);
  await settle(page);
  assert.equal((await readPage(page)).error, null);
  const typed = ['llama-3.1-8b', '--batch', '8', '--seq', '4096', '--gpu', 'rtx-4090', ...plan.flags];
  const advice = JSON.parse(execFileSync(cli, ['advise', ...typed, '--json'], { encoding: 'utf8' }));
  const shown = await page.$$eval('#advice li strong', (es) => es.map((e) => e.textContent));
  assert.ok(shown.length > 0);
  assert.equal(shown[0], advice.options.find((o) => o.fits).change);
  const sweep = JSON.parse(execFileSync(cli, ['sweep', ...typed, '--over', 'batch', '--json'], { encoding: 'utf8' }));
  const batchChart = page.locator('#charts svg').first();
  assert.match(await batchChart.getAttribute('aria-label'), /per GPU/);
  assert.equal(await batchChart.locator('circle.over').count(), sweep.points.filter((p) => !p.fits).length);
  assert.equal(await batchChart.locator('circle.fits').count(), sweep.points.filter((p) => p.fits).length);
  await page.evaluate(() => document.getElementById('verdict').scrollIntoView());
  await page.screenshot({ path: path.join(shots, 'layout.png'), fullPage: true });
  assert.deepEqual(page.jsErrors, []);
  await page.context().close();
});

test('a layout the engine refuses shows its error and marks the control', async () => {
  const page = await openPage();
  // Tensor parallel 8 does not divide Qwen2.5-1.5B's 12 attention heads.
  await setPlan(page, { preset: 'qwen2.5-1.5b', gpu: 'rtx-4090', layout: { gpus: 8, tp: 8 } });
  let got = await readPage(page);
  const refused = (args) => {
    try {
      execFileSync(cli, args, { encoding: 'utf8', stdio: 'pipe' });
    } catch (e) {
      return e.stderr.trim().replace(/^trainmem: error: /, '');
    }
    assert.fail(`${args.join(' ')} was priced`);
  };
  const tpError = refused(['estimate', 'qwen2.5-1.5b', '--batch', '1', '--gpu', 'rtx-4090', '--gpus', '8', '--tp', '8']);
  assert.match(tpError, /--tp: 8 does not divide the 12 attention heads/);
  assert.ok(got.error && got.error.includes(tpError), `${got.error} should say ${tpError}`);
  assert.ok(Number.isNaN(got.peak), 'no peak beside the error');
  assert.equal(await page.getAttribute('#tp', 'aria-invalid'), 'true');
  // FSDP hybrid on one node: the layout's own check, naming --fsdp, marks the sharding select.
  await setGpus(page, { gpus: 8, sharding: 'fsdp-hybrid' });
  await page.evaluate(() => window.trainmemPage.update());
  got = await readPage(page);
  const hybridError = refused(['estimate', 'qwen2.5-1.5b', '--gpus', '8', '--fsdp', 'hybrid']);
  assert.ok(got.error && got.error.includes(hybridError), `${got.error} should say ${hybridError}`);
  assert.equal(await page.getAttribute('#sharding', 'aria-invalid'), 'true');
  assert.equal(await page.getAttribute('#tp', 'aria-invalid'), null);
  // A GPU count that is not a whole number: the plan reader's error names the layout field.
  await setGpus(page, { gpus: '', sharding: 'zero3' });
  await page.evaluate(() => window.trainmemPage.update());
  got = await readPage(page);
  assert.match(got.error || '', /layout\.gpus_per_node: must be an integer/);
  assert.equal(await page.getAttribute('#gpus', 'aria-invalid'), 'true');
  // Set right again, the plan is priced and nothing stays marked.
  await setGpus(page, { gpus: 8, sharding: 'zero3' });
  await page.evaluate(() => window.trainmemPage.update());
  got = await readPage(page);
  assert.equal(got.error, null);
  assert.equal(await page.locator('[aria-invalid]').count(), 0);
  assert.deepEqual(page.jsErrors, []);
  await page.context().close();
});

test('one GPU is priced as before: no layout is sent and nothing per rank is shown', async () => {
  const page = await openPage();
  const plan = { preset: 'qwen3-8b', method: 'lora', batch: 2, seq: 2048, gpu: 'rtx-4090' };
  const one = cliJson(cliArgs(plan));
  assert.equal(one.schema, 'trainmem.ledger/1');
  await setPlan(page, { ...plan, layout: { gpus: 8, sharding: 'zero3' } });
  const spread = await readPage(page);
  assert.notEqual(spread.peak, one.totals.peak_bytes, 'ZeRO-3 on 8 GPUs prices another peak');
  // Back to one GPU: the request carries no layout, and the page is the single-GPU page.
  await setGpus(page, {});
  await page.evaluate(() => window.trainmemPage.update());
  const got = await readPage(page);
  assert.equal(got.error, null);
  assert.equal(await page.evaluate(() => window.trainmemPage.layoutRequest()), null);
  assert.equal(got.peak, one.totals.peak_bytes);
  assert.equal(got.judged, one.fit.peak_bytes);
  assert.deepEqual(got.notes, one.notes);
  assert.equal((await readLayout(page)).shown, false);
  assert.match(await page.textContent('#verdict'), /^Peak \d/);
  assert.doesNotMatch(got.command, /--gpus|--nodes|--zero|--fsdp|--offload|--tp|--pp/);
  assert.doesNotMatch(await page.inputValue('#share-link'), /gpus|sharding|offload|nodes|tp=|pp=/);
  assert.deepEqual(page.jsErrors, []);
  await page.context().close();
});
