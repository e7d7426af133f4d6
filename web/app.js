// The page: reads the form into a request, asks the engine (trainmem.js, the C++ library compiled
// to WebAssembly) through its one function, and draws the answer. No arithmetic about memory is
// done here; sizes are only divided by 2^30 or 10^9 for display, as the command line does.
'use strict';

// The form's starting state. The plan fields are overwritten at start-up with the engine's own
// defaults (op "form": the command line's defaults), except the example's batch of 4.
const DEFAULTS = {
  source: 'preset', preset: 'qwen2.5-1.5b', config: '', method: 'full', lora_rank: '16',
  lora_targets: 'q,k,v,o,gate,up,down', lora_dropout: '0', dora: false, quant: 'nf4', double_quant: true,
  train_modules: '', train_layers: '', optimizer: 'adamw', optimizer_impl: 'fused', precision: 'bf16-mixed', batch: '4',
  seq: '1024', grad_accum: '1', checkpointing: 'none', attention: 'sdpa', loss: 'full',
  eval_strategy: 'no', eval_batch: '8', framework: 'hf', compile: false, padding_mask: false,
  keep_outputs: false, use_cache: false,
  device: 'rtx-4090', memory: '24', memory_unit: 'GiB', units: 'gib', alloc_conf: '', cuda: '',
  gpus: '1', nodes: '1', sharding: 'none', offload: 'none', tp: '1', pp: '1',
};
const EXAMPLE = { batch: '4' };
// The command line's defaults once the form's framework and method are given (op "form" with
// them: a profile's defaults, LoRA's bf16 base): a plan field equal to its default is not sent,
// exactly as a flag left out of a command. PROFILE names the framework and method they are for.
// BASE_DEFAULTS are the command line's with no flag at all, which the framework and method
// themselves are compared with.
let ENGINE_DEFAULTS = {};
let BASE_DEFAULTS = {};
let PROFILE = 'hf/full';
const FIELDS = Object.keys(DEFAULTS).filter((k) => k !== 'source');
// Behaviour switches (docs/frameworks.md), as the command line's --compile, --padding-mask, ...
const SWITCHES = ['compile', 'padding_mask', 'keep_outputs', 'use_cache'];
const $ = (id) => document.getElementById(id);

let engine = null;
let tenants = [];
let folder = null;  // {folder, config_text, index_text, safetensors: [...]} from a dropped folder
// Why the last dropped folder could not be read: with the folder source chosen, the page shows it
// rather than price another model.
let folderError = 'drop a model folder (its config.json and safetensors files)';
let lastLedger = null;
let selectedLine = -1;

// ---- the engine -------------------------------------------------------------------------------

function call(request) {
  const text = engine.ccall('trainmem_call', 'string', ['string'], [JSON.stringify(request)]);
  return JSON.parse(text);
}

// ---- state: form <-> object <-> URL hash ------------------------------------------------------

function readState() {
  const s = { source: document.querySelector('input[name=source]:checked').value };
  for (const k of FIELDS) {
    const el = $(k);
    s[k] = el.type === 'checkbox' ? el.checked : el.value;
  }
  return s;
}

function writeState(s) {
  const src = document.querySelector(`input[name=source][value="${s.source}"]`);
  if (src) src.checked = true;
  for (const k of FIELDS) {
    const el = $(k);
    if (!(k in s)) continue;
    if (el.type === 'checkbox') el.checked = s[k] === true || s[k] === 'true' || s[k] === '1';
    else el.value = s[k];
  }
}

// A value as the form holds it: booleans for checkboxes, text otherwise.
function typed(k, v) {
  return typeof DEFAULTS[k] === 'boolean' ? v === true || v === 'true' : v;
}

// The engine's defaults for a framework and method (trainmem.form/1 "defaults"), or null for a
// name the engine refuses (the update then shows its error).
function defaultsFor(framework, method) {
  const form = call({ op: 'form', plan: { framework, method } });
  return form.ok ? form.defaults : null;
}

// Where the form starts for a framework and method: their engine defaults, and the page's own
// (the source, the device, the example's batch).
function pageDefaults(framework, method) {
  const d = { ...DEFAULTS };
  const engineDefaults = defaultsFor(framework, method) || {};
  for (const k of Object.keys(DEFAULTS)) if (k in engineDefaults) d[k] = typed(k, engineDefaults[k]);
  return Object.assign(d, EXAMPLE);
}

// Only what differs from the defaults of its framework and method goes into the link, so links
// stay short; the framework and method themselves differ from the page's (hf, full).
function stateToHash(s) {
  const base = { ...pageDefaults(s.framework, s.method), framework: DEFAULTS.framework, method: DEFAULTS.method };
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(s)) {
    if (k === 'config' && s.source === 'preset') continue;
    if (String(v) !== String(base[k])) p.set(k, String(v));
  }
  return p.toString();
}

function hashToState(hash) {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const s = pageDefaults(p.get('framework') || DEFAULTS.framework, p.get('method') || DEFAULTS.method);
  for (const [k, v] of p) {
    if (k in DEFAULTS) s[k] = typed(k, v);
  }
  // A folder's headers cannot travel in a link: its config.json does, priced from the config.
  if (s.source === 'folder') s.source = s.config ? 'config' : 'preset';
  return s;
}

// A state written to the form, with the defaults of its framework and method as the ones a field
// is compared with.
// What a link named that the form has no choice for (a renamed device, a misspelt method): each
// such field keeps its default, and the notes say which value was passed over.
let linkNotes = [];

function loadState(s) {
  writeState(s);
  linkNotes = [];
  const fallback = pageDefaults(DEFAULTS.framework, DEFAULTS.method);
  for (const k of FIELDS) {
    const field = $(k);
    if (field.tagName !== 'SELECT' || !(k in s) || field.value === String(s[k])) continue;
    field.value = String(k in fallback ? fallback[k] : DEFAULTS[k]);
    linkNotes.push(`The link names ${k} '${s[k]}', which this page does not offer; `
      + `priced with ${field.value || 'the default'} instead.`);
  }
  ENGINE_DEFAULTS = defaultsFor(s.framework, s.method) || ENGINE_DEFAULTS;
  PROFILE = `${s.framework}/${s.method}`;
}

// When the framework or method changes, the fields still at the old defaults move to the new ones
// (torchtune checkpoints in bf16, a LoRA base loads in bf16), so the form shows what the engine
// prices; a field the user changed keeps its value, and is sent.
function followProfile() {
  const s = readState();
  const key = `${s.framework}/${s.method}`;
  if (key === PROFILE) return;
  const next = defaultsFor(s.framework, s.method);
  if (!next) return;
  const moved = {};
  for (const k of Object.keys(next)) {
    if (!(k in DEFAULTS) || k === 'framework' || k === 'method') continue;
    if (String(s[k]) === String(ENGINE_DEFAULTS[k])) moved[k] = typed(k, next[k]);
  }
  writeState(moved);
  ENGINE_DEFAULTS = next;
  PROFILE = key;
}

// ---- state -> request -------------------------------------------------------------------------

function modelRequest(s) {
  if (s.source === 'preset') return { preset: s.preset };
  // No folder read: nothing to price (the config box may still hold an earlier folder's config).
  if (s.source === 'folder') return folder;
  return { config_text: s.config, name: 'config.json' };
}

// Only the settings that differ from the command line's defaults are sent, as only the flags a
// user types reach the command line: a framework profile or the LoRA recipe then fills the rest
// exactly as `trainmem estimate` does.
function planRequest(s) {
  const keys = ['method', 'optimizer', 'optimizer_impl', 'precision', 'batch', 'seq', 'grad_accum',
    'checkpointing', 'attention', 'loss', 'framework'];
  if (s.method === 'lora' || s.method === 'qlora') keys.push('lora_rank', 'lora_targets', 'lora_dropout', 'dora');
  if (s.method === 'qlora') keys.push('quant', 'double_quant');
  if (s.method === 'freeze') keys.push('train_modules');
  if (s.method !== 'full') keys.push('train_layers');
  if (s.eval_strategy !== 'no') keys.push('eval_strategy', 'eval_batch');
  // Behaviour switches: sent only when on, as the command line's --compile / --padding-mask.
  for (const k of SWITCHES) if (s[k]) keys.push(k);
  // The GPU's runtime: the allocator's configuration and the CUDA version (docs/gpu.md), each as
  // --alloc-conf and --versions cuda= would give it; unset, PyTorch's defaults and the engine's
  // CUDA runtime (gpu/cuda_context.h).
  const p = {};
  for (const k of keys) {
    const d = k === 'framework' || k === 'method' ? BASE_DEFAULTS[k] : ENGINE_DEFAULTS[k];
    // An empty dropout box goes as it is, and the engine refuses it (Number('') would be 0).
    if (String(s[k]) !== String(d)) p[k] = k === 'lora_dropout' && s[k] !== '' ? Number(s[k]) : s[k];
  }
  if (s.alloc_conf.trim() !== '') p.alloc_conf = s.alloc_conf.trim();
  if (s.cuda !== '') p.versions = `cuda=${s.cuda}`;
  return p;
}

// The GPUs section as a layout in the plan JSON's layout names (docs/formats.md, the names Python's
// layout= takes), only the fields that differ from one GPU's; null when nothing does, so one GPU
// sends exactly the request it always did. The engine reads and checks it (plan_from_json).
const SHARDING = {
  none: {},
  zero1: { engine: 'deepspeed', zero_stage: 1 },
  zero2: { engine: 'deepspeed', zero_stage: 2 },
  zero3: { engine: 'deepspeed', zero_stage: 3 },
  'fsdp-full': { engine: 'fsdp', fsdp: 'full' },
  'fsdp-grad-op': { engine: 'fsdp', fsdp: 'grad-op' },
  'fsdp-hybrid': { engine: 'fsdp', fsdp: 'hybrid' },
};
const OFFLOAD = {
  none: {}, optimizer: { offload_optimizer: true }, params: { offload_params: true },
  both: { offload_optimizer: true, offload_params: true },
};

// A count as typed: a whole number goes as a number, anything else as it is (the engine refuses
// it naming the field).
function count(v) {
  return /^\s*\d+\s*$/.test(String(v)) ? Number(v) : v;
}

function layoutRequest(s) {
  const l = {};
  if (String(s.gpus) !== '1') l.gpus_per_node = count(s.gpus);
  if (String(s.nodes) !== '1') l.nodes = count(s.nodes);
  Object.assign(l, SHARDING[s.sharding] || {});
  // Offload is a sharding engine's (the control shows only with one).
  if (s.sharding !== 'none') Object.assign(l, OFFLOAD[s.offload] || {});
  if (String(s.tp) !== '1') l.tp = count(s.tp);
  if (String(s.pp) !== '1') l.pp = count(s.pp);
  // Without a sharding engine the engine picks one, as the command line's --tp and --pp do:
  // tensor or pipeline parallel alone is Megatron-LM's (implied_engine, include/trainmem/plan.h).
  return Object.keys(l).length ? l : null;
}

// The command line's layout flags for the same layout (--gpus, --nodes, --zero, --fsdp,
// --offload, --tp, --pp).
function layoutFlags(l) {
  if (!l) return [];
  const args = [];
  const q = (v) => shellQuote(String(v));
  if ('gpus_per_node' in l) args.push('--gpus', q(l.gpus_per_node));
  if ('nodes' in l) args.push('--nodes', q(l.nodes));
  if (l.engine === 'deepspeed') args.push('--zero', q(l.zero_stage));
  if (l.engine === 'fsdp') args.push('--fsdp', q(l.fsdp));
  const offload = l.offload_optimizer && l.offload_params ? 'both'
    : l.offload_optimizer ? 'optimizer' : l.offload_params ? 'params' : '';
  if (offload) args.push('--offload', offload);
  if ('tp' in l) args.push('--tp', q(l.tp));
  if ('pp' in l) args.push('--pp', q(l.pp));
  return args;
}

function deviceRequest(s) {
  if (s.device === 'none') return {};
  if (s.device === 'custom') return { memory: `${s.memory}${s.memory_unit}` };
  return { gpu: s.device };
}

// The command line that prices the same plan (non-default flags only).
function commandFor(s) {
  const model = s.source === 'preset' ? s.preset
    : s.source === 'folder' && folder ? (folder.folder || 'path/to/model-folder') : 'config.json';
  const args = ['trainmem', 'estimate', model];
  const plan = planRequest(s);
  for (const [k, v] of Object.entries(plan)) {
    if (k === 'dora' || SWITCHES.includes(k)) {
      if (v) args.push(`--${k.replace(/_/g, '-')}`);
      continue;
    }
    if (k === 'double_quant') { if (!v) args.push('--no-double-quant'); continue; }
    args.push(`--${k.replace(/_/g, '-')}`, shellQuote(String(v)));
  }
  args.push(...layoutFlags(layoutRequest(s)));
  const d = deviceRequest(s);
  if (d.gpu) args.push('--gpu', d.gpu);
  if (d.memory) args.push('--memory', d.memory);
  if (s.units !== 'gib') args.push('--units', s.units);
  return args.join(' ');
}

function shellQuote(v) {
  return /^[\w.,:/@+=-]+$/.test(v) ? v : `'${v.replace(/'/g, "'\\''")}'`;
}

// ---- display helpers --------------------------------------------------------------------------

function fmtBytes(bytes, units) {
  const [div, name] = units === 'gb' ? [1e9, 'GB'] : [2 ** 30, 'GiB'];
  return `${(bytes / div).toFixed(2)} ${name}`;
}

function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return e;
}

const SVG = 'http://www.w3.org/2000/svg';
function svg(tag, attrs = {}, text) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

function tenantIndex(id) { return tenants.findIndex((t) => t.id === id); }

function stackedBar(byTenant, scale, limitBytes, label, gpuExtra = 0) {
  const bar = el('div', { class: 'bar', role: 'img', 'aria-label': label });
  tenants.forEach((t, i) => {
    const b = byTenant[t.id] || 0;
    if (b <= 0) return;
    const span = el('span', { class: `t${i}`, title: `${t.title}: ${fmtBytes(b, readState().units)}` });
    span.style.width = `${(100 * b) / scale}%`;
    bar.append(span);
  });
  if (gpuExtra > 0) {
    const span = el('span', { class: 'gpu-extra',
      title: `Allocator cache and CUDA context: ${fmtBytes(gpuExtra, readState().units)}` });
    span.style.width = `${(100 * gpuExtra) / scale}%`;
    bar.append(span);
  }
  if (limitBytes) {
    const limit = el('span', { class: 'limit', title: 'usable memory' });
    limit.style.left = `${Math.min(100, (100 * limitBytes) / scale)}%`;
    bar.append(limit);
  }
  return bar;
}

// ---- rendering --------------------------------------------------------------------------------

function showError(message) {
  const box = $('error');
  box.hidden = !message;
  box.textContent = message ? `Cannot price this plan: ${message}` : '';
  $('results').classList.toggle('failed', !!message);
}

// The report's notes, as the command line prints them under the budget: the defaults the plan
// took, what it means on this model, and the assumptions behind the figures.
function renderNotes(notes) {
  $('notes').replaceChildren(...[...linkNotes, ...notes].map((n) => el('li', {}, n)));
}

// `dist` is the trainmem.distributed/1 document across GPUs (null on one GPU): the ledger is then its
// most-loaded rank's, and every figure is per GPU.
function renderVerdict(ledger, verdictText, s, dist) {
  const t = ledger.totals;
  const f = ledger.fit;
  const box = $('verdict');
  box.className = '';
  box.replaceChildren();
  const peakLine = el('div', { class: 'big' }, dist ? 'Peak per GPU ' : 'Peak ',
    el('span', { id: 'peak', 'data-bytes': String(t.peak_bytes) }, fmtBytes(t.peak_bytes, s.units)),
    ` at ${t.peak_phase.replace(/_/g, ' ')}`);
  box.append(peakLine);
  if (dist) {
    box.append(el('div', { class: 'help', id: 'most-loaded' },
      `${dist.layout.describe}: the most-loaded rank, ${dist.most_loaded.name}.`));
  }
  if (!f) {
    $('summary').replaceChildren(`Peak ${fmtBytes(t.peak_bytes, s.units)}`);
    box.append(el('div', {}, 'No device chosen: pick one to get a verdict.'));
    renderGpu(null, s, dist);
    return;
  }
  const state = !f.fits ? 'over' : f.tight ? 'tight' : 'fits';
  box.classList.add(state);
  const word = { fits: 'Fits', tight: 'Fits, but tight', over: 'Does not fit' }[state];
  // The figure the verdict judged: on a CUDA card the device total, not the peak.
  $('summary').replaceChildren(el('span', { class: `word ${state}` }, word),
    ` · ${f.figure === 'device total' ? 'device total' : 'peak'} ${fmtBytes(f.peak_bytes, s.units)}`
    + ` of ${fmtBytes(f.usable_bytes, s.units)} usable`);
  const whose = dist ? 'the most-loaded rank\'s' : 'the';
  const figure = f.figure === 'device total'
    ? `${whose} device total (what nvidia-smi shows: the allocator's reserve and the CUDA context on top of the peak)`
    : `${whose} peak`;
  box.append(el('div', {},
    el('strong', { class: `word ${state}`, id: 'verdict-word', 'data-bytes': String(f.peak_bytes) }, word),
    ` on ${dist ? `each ${f.device_name}` : f.device_name}: ${figure}, ${verdictText}, against ${fmtBytes(f.usable_bytes, s.units)} usable `
    + `(${(100 * f.used_fraction).toFixed(0)}% of it). `,
    f.fits ? `${fmtBytes(f.margin_bytes, s.units)} to spare.`
      : `Over by ${fmtBytes(-f.margin_bytes, s.units)}.`));
  if (f.reserve_bytes > 0) {
    box.append(el('div', { class: 'help' }, `Capacity ${fmtBytes(f.capacity_bytes, s.units)}, `
      + `${fmtBytes(f.reserve_bytes, s.units)} kept back: the driver's hold and a margin.`));
  }
  renderGpu(ledger.gpu, s, dist);
}

// The caching allocator's replay, as the command line's "On the GPU" block: the three figures
// PyTorch and nvidia-smi report, and what the replay found (an out-of-memory request, the
// device's own cuBLAS workspaces).
function renderGpu(gpu, s, dist) {
  const box = $('gpu');
  if (!gpu) { box.replaceChildren(); return; }
  box.replaceChildren(
    el('div', {}, `${dist ? 'On the most-loaded GPU' : 'On the GPU'}: peak allocated ${fmtBytes(gpu.peak_allocated_bytes, s.units)}`
      + ` (torch.cuda.max_memory_allocated) · peak reserved ${fmtBytes(gpu.peak_reserved_bytes, s.units)}`
      + ` (max_memory_reserved) · CUDA context ${fmtBytes(gpu.context_bytes, s.units)}`
      + `${gpu.context_estimated ? ' (estimated)' : ''} · device total ${fmtBytes(gpu.device_total_bytes, s.units)}`
      + ` (nvidia-smi) · allocator settings ${gpu.alloc_conf || 'the defaults'}`),
    el('ul', {}, ...gpu.notes.map((n) => el('li', {}, n))));
}

// Across GPUs: the layout, the peak of each class of ranks (one per pipeline stage) with the
// most-loaded one marked, and what one node holds in host memory, from trainmem.distributed/1.
function renderLayout(dist, s) {
  $('layout').hidden = !dist;
  if (!dist) {
    for (const id of ['layout-describe', 'ranks', 'host']) $(id).replaceChildren();
    return;
  }
  const l = dist.layout;
  $('layout-describe').replaceChildren(`${l.describe}: ${l.data_parallel} data-parallel `
    + `replica${l.data_parallel === 1 ? '' : 's'}, states sharded over ${l.shard_group} `
    + `rank${l.shard_group === 1 ? '' : 's'}.`);
  const rows = dist.ranks.map((r, i) => el('tr', { class: i === dist.most_loaded.index ? 'most-loaded' : '' },
    el('td', {}, r.name, i === dist.most_loaded.index ? ' (most loaded)' : ''),
    el('td', { class: 'num' }, String(r.ranks)),
    el('td', { class: 'num', 'data-bytes': String(r.peak_bytes) }, fmtBytes(r.peak_bytes, s.units))));
  $('ranks').replaceChildren(el('table', {}, el('caption', { class: 'sr-only' }, 'Peak per rank'),
    el('thead', {}, el('tr', {}, el('th', {}, 'Ranks'), el('th', { class: 'num' }, 'GPUs'),
      el('th', { class: 'num' }, 'Peak per GPU'))),
    el('tbody', {}, rows)));
  const host = dist.host_per_node;
  const items = host.items.map((it) => el('tr', {},
    el('td', { title: `${it.formula} (${it.source})` }, it.label),
    el('td', { class: 'num' }, fmtBytes(it.bytes, s.units))));
  $('host').replaceChildren(
    el('p', {}, 'Host memory per node: ',
      el('strong', { id: 'host-peak', 'data-bytes': String(host.peak_bytes) }, fmtBytes(host.peak_bytes, s.units))),
    items.length ? el('table', {}, el('caption', { class: 'sr-only' }, 'Host memory per node'),
      el('tbody', {}, items)) : '');
}

// `timeline` is the trainmem.timeline/1 document: one row per phase slot, live bytes by tenant.
function renderBudget(ledger, timeline, s) {
  const peakRow = timeline.slots.find((r) => r.peak);
  const f = ledger.fit;
  // A CUDA card is judged on its device total: what the caching allocator holds beyond the live
  // tensors, and the CUDA context, stack on the peak so the bar crosses the line when the verdict
  // says over.
  const gpuExtra = f && f.figure === 'device total' ? Math.max(0, f.peak_bytes - peakRow.bytes) : 0;
  const scale = Math.max(peakRow.bytes + gpuExtra, f ? f.usable_bytes : 0) * 1.02;
  const bar = stackedBar(peakRow.by_tenant, scale, f ? f.usable_bytes : 0,
    `Peak ${fmtBytes(peakRow.bytes, s.units)} by tenant`
    + (gpuExtra ? `, device total ${fmtBytes(f.peak_bytes, s.units)}` : ''), gpuExtra);
  const legend = el('div', { class: 'legend' });
  tenants.forEach((t, i) => {
    const b = peakRow.by_tenant[t.id];
    if (b > 0) legend.append(el('span', {}, el('i', { class: `t${i}` }), `${t.title} ${fmtBytes(b, s.units)}`));
  });
  if (gpuExtra) {
    legend.append(el('span', {}, el('i', { class: 'gpu-extra' }),
      `Allocator cache and CUDA context ${fmtBytes(gpuExtra, s.units)}`));
  }
  $('budget').replaceChildren(bar, legend);

  // Lines not live at the peak (gradients before backward, a backward transient) are listed for
  // their arithmetic but do not add to the peak: say so, as the command line's "up to" does.
  const peakPhase = ledger.totals.peak_phase;
  const rows = ledger.items.map((item, i) => {
    const ti = tenantIndex(item.tenant);
    const atPeak = item.phases.includes(peakPhase);
    const tr = el('tr', { class: `${i === selectedLine ? 'selected' : ''}${atPeak ? '' : ' off-peak'}` },
      el('td', {}, el('i', { class: `swatch t${ti}` })),
      el('td', {}, el('button', { type: 'button', class: 'line', 'aria-expanded': String(i === selectedLine),
        onclick: () => {
          selectedLine = i;
          renderBudget(ledger, timeline, s);
          renderExplain(item, s);
          // The table was rebuilt: give focus back to the same line for keyboard users.
          document.querySelectorAll('#lines button.line')[i]?.focus();
        } },
      item.label)),
      el('td', { class: 'num' }, atPeak ? fmtBytes(item.bytes, s.units)
        : el('span', { title: `not live at the peak; ${fmtBytes(item.bytes, s.units)} in other phases` },
          `0 (up to ${fmtBytes(item.bytes, s.units)})`)));
    return tr;
  });
  const table = el('table', {}, el('caption', { class: 'sr-only' }, 'Ledger lines'),
    el('thead', {}, el('tr', {}, el('th', {}, ''), el('th', {}, 'Line'), el('th', { class: 'num' }, 'At the peak'))),
    el('tbody', {}, rows));
  $('lines').replaceChildren(table);
  if (selectedLine >= 0 && selectedLine < ledger.items.length) renderExplain(ledger.items[selectedLine], s);
  else $('explain').replaceChildren();
}

function renderExplain(item, s) {
  $('explain').replaceChildren(
    el('strong', {}, item.label),
    el('div', {}, `${fmtBytes(item.bytes, s.units)} = ${item.bytes.toLocaleString('en-US')} bytes`
      + (item.estimated ? ' (modelled)' : ' (counted)')),
    el('div', {}, 'Arithmetic: ', el('code', {}, item.formula)),
    el('div', {}, 'Source: ', item.source),
    el('div', { class: 'help' }, `Live in: ${item.phases.join(', ').replace(/_/g, ' ')}`));
}

function renderTimeline(timeline, ledger, s) {
  const max = Math.max(...timeline.slots.map((r) => r.bytes), ledger.fit ? ledger.fit.usable_bytes : 0) * 1.02;
  const box = el('div', { class: 'timeline' });
  for (const r of timeline.slots) {
    const name = r.phase.replace(/_/g, ' ');
    box.append(el('div', { class: `trow${r.peak ? ' peak' : ''}` },
      el('span', {}, r.peak ? `${name} (peak)` : name),
      stackedBar(r.by_tenant, max, ledger.fit ? ledger.fit.usable_bytes : 0, `${name}: ${fmtBytes(r.bytes, s.units)}`),
      el('span', { class: 'num' }, fmtBytes(r.bytes, s.units))));
  }
  // Every tenant drawn in some phase, not only those live at the peak (gradients, transients).
  const legend = el('div', { class: 'legend' });
  tenants.forEach((t, i) => {
    if (timeline.slots.some((r) => (r.by_tenant[t.id] || 0) > 0)) {
      legend.append(el('span', {}, el('i', { class: `t${i}` }), t.title));
    }
  });
  $('timeline').replaceChildren(
    el('p', { class: 'help', id: 'peak-phase' }, `The peak falls at ${timeline.peak_phase.replace(/_/g, ' ')}.`),
    legend, box);
}

// `sw` is the trainmem.sweep/1 document of one sweep: each point is keyed by the swept setting
// ("batch" or "seq"), and the device, if any, gives the usable limit. With a device each point
// also carries the figure the verdict judges (judged_bytes: the device total on a CUDA card), drawn
// as a third curve whose dots say fits or not, as `trainmem sweep --svg` draws them.
function chart(sw, current, s, title) {
  const W = 420, H = 240, L = 52, R = 12, T = 24, B = 36;
  const pts = sw.points.map((p) => ({ ...p, x: p[sw.over] }));
  if (!pts.length) {
    return el('p', { class: 'help' }, `${title}: no point of this sweep could be priced.`);
  }
  const usable = sw.device ? sw.device.usable_bytes : 0;
  const judged = pts.every((p) => Number.isFinite(p.judged_bytes));
  const xs = pts.map((p) => p.x);
  const ymax = Math.max(...pts.map((p) => Math.max(p.peak_bytes, judged ? p.judged_bytes : 0)), usable) * 1.08;
  const xmin = Math.min(...xs), xmax = Math.max(...xs);
  const X = (x) => L + ((x - xmin) / Math.max(1, xmax - xmin)) * (W - L - R);
  const Y = (y) => H - B - (y / ymax) * (H - T - B);
  const unitDiv = s.units === 'gb' ? 1e9 : 2 ** 30;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': `${title}; ${usable ? `the dashed line is the usable ${fmtBytes(usable, s.units)}` : 'no device'}` });
  root.append(svg('text', { x: L, y: 15, 'font-weight': 600 }, title));
  for (let i = 0; i <= 4; i++) {
    const y = (ymax * i) / 4;
    root.append(svg('line', { x1: L, x2: W - R, y1: Y(y), y2: Y(y), class: 'grid' }));
    root.append(svg('text', { x: L - 4, y: Y(y) + 4, 'text-anchor': 'end' }, (y / unitDiv).toFixed(0)));
  }
  root.append(svg('text', { x: 4, y: T - 8 }, s.units === 'gb' ? 'GB' : 'GiB'));
  const ticks = [...new Set([xs[0], xs[Math.floor(xs.length / 2)], xs[xs.length - 1]])];
  for (const x of ticks) root.append(svg('text', { x: X(x), y: H - B + 16, 'text-anchor': 'middle' }, x));
  root.append(svg('text', { x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle' }, sw.over === 'batch' ? 'micro-batch' : 'sequence length'));
  const path = (key) => pts.map((p, i) => `${i ? 'L' : 'M'}${X(p.x).toFixed(1)},${Y(p[key]).toFixed(1)}`).join(' ');
  root.append(svg('path', { d: path('static_bytes'), class: 'static' }));
  root.append(svg('path', { d: path('peak_bytes'), class: 'peak' }));
  if (judged) {
    root.append(svg('path', { d: path('judged_bytes'), class: 'judged' }));
    for (const p of pts) {
      root.append(svg('circle', { cx: X(p.x), cy: Y(p.judged_bytes), r: 2.5, class: p.fits ? 'fits' : 'over' }));
    }
  }
  if (usable) {
    root.append(svg('line', { x1: L, x2: W - R, y1: Y(usable), y2: Y(usable), class: 'limit' }));
    root.append(svg('text', { x: W - R - 2, y: Y(usable) - 4, 'text-anchor': 'end' }, 'usable'));
  }
  const here = pts.find((p) => p.x === Number(current));
  if (here) root.append(svg('circle', { cx: X(here.x), cy: Y(judged ? here.judged_bytes : here.peak_bytes), r: 4, class: 'now' }));
  return root;
}

function renderAdvice(advice, s) {
  if (!advice) {
    $('advice').replaceChildren(el('p', { class: 'help' }, 'Pick a device to get advice.'));
    return;
  }
  const fitting = advice.options.filter((o) => o.fits);
  const rest = advice.options.filter((o) => !o.fits);
  const item = (o) => el('li', {},
    el('strong', {}, o.change), ' ', el('code', {}, o.flags), el('br'),
    el('span', { class: o.fits ? 'fits' : 'over' },
      `${advice.now.figure} ${fmtBytes(o.peak_bytes, s.units)}, ${o.fits ? `fits with ${fmtBytes(o.margin_bytes, s.units)} free`
        : `over by ${fmtBytes(-o.margin_bytes, s.units)}`}`),
    ` — cost: ${o.cost}`);
  const parts = [];
  if (!advice.options.length) parts.push(el('p', {}, 'No change in trainmem\'s list lowers the peak.'));
  if (fitting.length) {
    parts.push(el('p', {}, advice.fits_now ? 'Changes that add headroom, cheapest first:' : 'Changes that make it fit, cheapest first:'),
      el('ol', {}, fitting.slice(0, 8).map(item)));
  }
  if (rest.length) {
    parts.push(el('p', {}, 'Help, but not enough on their own:'), el('ol', {}, rest.slice(0, 5).map(item)));
  }
  $('advice').replaceChildren(...parts);
}

// ---- one update -------------------------------------------------------------------------------
// First the verdict, budget, lines and timeline (one estimate: a few ms), painted at once; then,
// in later tasks so typing stays responsive, the two sweeps and the advice (dozens of estimates
// each). A newer change cancels the later tasks of an older one.

let generation = 0;
function update() {
  const t0 = performance.now();
  const gen = ++generation;
  document.body.dataset.settled = 'false';
  followProfile();
  const s = readState();
  syncVisibility(s);
  const base = { model: modelRequest(s), plan: planRequest(s), device: deviceRequest(s), units: s.units };
  const layout = layoutRequest(s);
  if (layout) base.layout = layout;
  const hash = stateToHash(s);
  if (location.hash.replace(/^#/, '') !== hash) history.replaceState(null, '', hash ? `#${hash}` : location.pathname);
  $('share-link').value = location.href;
  $('command').textContent = commandFor(s);

  const r = base.model ? call({ op: 'explain', ...base })
    : { ok: false, error: folderError, field: '--folder-input' };
  $('report').hidden = !r.ok;
  $('verdict').hidden = !r.ok;
  if (!r.ok) {
    showError(r.error);
    markField(/config\.json$/.test(r.file || '') ? '--config' : r.field);
    for (const id of ['verdict', 'summary', 'gpu', 'budget', 'lines', 'explain', 'notes', 'timeline', 'charts', 'advice']) $(id).replaceChildren();
    renderLayout(null, s);
    $('explain-all').textContent = '';
    lastLedger = null;
    finish(t0, 'updateMs');
    finish(t0, 'fullUpdateMs');
    return;
  }
  showError('');
  markField('');
  // Across GPUs the answer is trainmem.distributed/1: its most-loaded rank's ledger is drawn, with
  // the document's totals, verdict, allocator replay and notes (those of `trainmem estimate --gpus`).
  const dist = r.distributed || null;
  const ledger = dist ? { ...dist.ranks[dist.most_loaded.index].ledger, totals: dist.totals,
    fit: dist.fit, gpu: dist.gpu, notes: dist.notes } : r.ledger;
  tenants = r.timeline.tenants;
  if (lastLedger && lastLedger.items.length !== ledger.items.length) selectedLine = -1;
  lastLedger = ledger;
  renderVerdict(ledger, r.verdict, s, dist);
  renderLayout(dist, s);
  renderBudget(ledger, r.timeline, s);
  renderTimeline(r.timeline, ledger, s);
  renderNotes(ledger.notes);
  $('explain-all').textContent = r.explain;
  finish(t0, 'updateMs');

  later(gen, () => {
    const batch = call({ op: 'sweep', over: 'batch', ...base });
    const seq = call({ op: 'sweep', over: 'seq', values: seqValues(ledger.plan.seq), ...base });
    if (!batch.ok || !seq.ok) return showError(batch.error || seq.error);
    $('charts').replaceChildren(
      chart(batch.sweep, s.batch, s, dist ? 'Peak per GPU against micro-batch' : 'Peak against micro-batch'),
      chart(seq.sweep, s.seq, s, dist ? 'Peak per GPU against sequence length' : 'Peak against sequence length'));
    later(gen, () => {
      renderAdvice(s.device === 'none' ? null : call({ op: 'advise', ...base }).advice, s);
      finish(t0, 'fullUpdateMs');
    });
  });
}

function later(gen, fn) {
  setTimeout(() => { if (gen === generation) fn(); }, 0);
}

// 16 sequence lengths in steps of 256 up to 8192 or twice the plan's, and the plan's own.
function seqValues(seq) {
  const top = Math.max(8192, 2 * seq);
  const step = Math.ceil(top / 16 / 256) * 256;
  const v = new Set();
  for (let x = step; x <= top; x += step) v.add(x);
  if (seq > 0) v.add(seq);
  return [...v].sort((a, b) => a - b);
}

function finish(t0, key) {
  const ms = performance.now() - t0;
  document.body.dataset[key] = ms.toFixed(2);
  const count = key === 'updateMs' ? 'updates' : 'fullUpdates';
  if (key === 'fullUpdateMs') document.body.dataset.settled = 'true';
  document.body.dataset[count] = String(Number(document.body.dataset[count] || 0) + 1);
}

// The controls of the GPUs section, by the layout flags and plan JSON fields errors name.
const LAYOUT_CONTROLS = {
  'gpus-per-node': 'gpus', engine: 'sharding', zero: 'sharding', 'zero-stage': 'sharding',
  fsdp: 'sharding', 'offload-optimizer': 'offload', 'offload-params': 'offload', 'offload-to': 'offload',
};

// A flag names its field: --lora-dropout is #lora_dropout; --folder-input is #folder-input; a
// layout field (layout.zero_stage) or flag (--zero) its control in the GPUs section.
function markField(flag) {
  for (const e of document.querySelectorAll('[aria-invalid]')) e.removeAttribute('aria-invalid');
  if (!flag) return;
  let name = flag.replace(/^--/, '');
  if (/^layout\./.test(name)) name = name.replace(/^layout\./, '').split('.')[0].replace(/_/g, '-');
  name = LAYOUT_CONTROLS[name] || name;
  const field = $(name) || $(name.replace(/-/g, '_'));
  if (field) field.setAttribute('aria-invalid', 'true');
}

function syncVisibility(s) {
  for (const e of document.querySelectorAll('[data-source]')) e.hidden = e.dataset.source !== s.source;
  for (const e of document.querySelectorAll('[data-when]')) e.hidden = !e.dataset.when.split(' ').includes(s.method);
  $('custom-size').hidden = s.device !== 'custom';
  for (const e of document.querySelectorAll('[data-sharded]')) e.hidden = s.sharding === 'none';
}

let pending = false;
function schedule() {
  if (pending) return;
  pending = true;
  requestAnimationFrame(() => { pending = false; update(); });
}

// ---- a dropped model folder: config.json, the index, and safetensors headers only --------------

const MAX_HEADER = 100000000;  // the safetensors reference implementation's header limit

function toBase64(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

async function headerPrefix(file) {
  const head = new Uint8Array(await file.slice(0, 8).arrayBuffer());
  let bytes = head;
  if (head.length === 8) {
    const n = Number(new DataView(head.buffer).getBigUint64(0, true));
    // Read the header only when its length is sane; the engine reports a bad length from 8 bytes.
    if (n <= MAX_HEADER && n <= file.size - 8) bytes = new Uint8Array(await file.slice(0, 8 + n).arrayBuffer());
  }
  return { name: file.name, size: file.size, prefix_b64: toBase64(bytes) };
}

async function loadFolder(files) {
  const top = files.filter((f) => !(f.relPath || f.webkitRelativePath || f.name).split('/').slice(1, -1).length);
  const byName = new Map(top.map((f) => [f.name, f]));
  const path = files[0] ? (files[0].relPath || files[0].webkitRelativePath || '') : '';
  const name = path.includes('/') ? path.split('/')[0] : 'model-folder';
  const config = byName.get('config.json');
  if (!config) {
    folder = null;
    folderError = `${name}: config.json: not in the folder (trainmem needs the architecture)`;
    $('folder-status').textContent = '';
    schedule();
    return;
  }
  const index = byName.get('model.safetensors.index.json');
  const shards = top.filter((f) => f.name.endsWith('.safetensors'));
  folder = {
    folder: name,
    config_text: await config.text(),
    index_text: index ? await index.text() : null,
    safetensors: await Promise.all(shards.map(headerPrefix)),
  };
  const read = folder.safetensors.reduce((a, h) => a + Math.floor((h.prefix_b64.length * 3) / 4), 0);
  $('folder-status').textContent = `${name}: config.json${index ? ', index' : ''} and ${shards.length} `
    + `safetensors header(s), ${read.toLocaleString('en-US')} bytes read of `
    + `${shards.reduce((a, f) => a + f.size, 0).toLocaleString('en-US')}.`;
  $('config').value = folder.config_text;
  schedule();
}

async function entriesOf(item) {
  const entry = item.webkitGetAsEntry && item.webkitGetAsEntry();
  if (!entry) return [];
  if (entry.isFile) return [await new Promise((res, rej) => entry.file((f) => { f.relPath = f.name; res(f); }, rej))];
  const reader = entry.createReader();
  const out = [];
  for (;;) {
    const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
    if (!batch.length) break;
    for (const e of batch) {
      if (e.isFile) out.push(await new Promise((res, rej) => e.file((f) => { f.relPath = `${entry.name}/${f.name}`; res(f); }, rej)));
    }
  }
  return out;
}

// ---- start ------------------------------------------------------------------------------------

function fillSelects() {
  const models = call({ op: 'models' });  // trainmem.models/1
  $('preset').replaceChildren(...models.models.map((m) => el('option', { value: m.id }, `${m.hf_id} (${m.published})`)));
  const devices = call({ op: 'devices' }).devices;  // trainmem.devices/1
  const groups = [['gpu', 'GPUs'], ['unified', 'Apple (unified memory)'], ['tier', 'Memory tiers']];
  const sel = $('device');
  sel.replaceChildren(el('option', { value: 'none' }, 'no device (peak only)'),
    el('option', { value: 'custom' }, 'custom size…'));
  for (const [kind, title] of groups) {
    sel.append(el('optgroup', { label: title }, devices.filter((d) => d.kind === kind)
      .map((d) => el('option', { value: d.id },
        `${d.name} — ${fmtBytes(d.capacity_bytes, 'gb')} = ${fmtBytes(d.capacity_bytes, 'gib')}`))));
  }
}

// The selects of enumerated settings list the engine's vocabulary (canonical names; the meaning as
// a tooltip), and the form starts at the command line's defaults.
function fillSettings() {
  const form = call({ op: 'form' });  // trainmem.form/1
  ENGINE_DEFAULTS = form.defaults;
  BASE_DEFAULTS = form.defaults;
  PROFILE = `${form.defaults.framework}/${form.defaults.method}`;
  for (const [key, terms] of Object.entries(form.choices)) {
    const select = $(key);
    if (!select || select.tagName !== 'SELECT') continue;  // lora_targets is typed, not chosen
    select.replaceChildren(...terms.map((t) => el('option', { value: t.name, title: t.meaning }, t.name)));
  }
  for (const k of Object.keys(DEFAULTS)) {
    if (!(k in ENGINE_DEFAULTS)) continue;
    const v = ENGINE_DEFAULTS[k];
    DEFAULTS[k] = typeof DEFAULTS[k] === 'boolean' ? v === 'true' : v;
  }
  Object.assign(DEFAULTS, EXAMPLE);
}

async function start() {
  engine = await createTrainmem();
  fillSelects();
  fillSettings();
  loadState(hashToState(location.hash));
  const form = $('plan');
  // Once the user edits the form, the link's passed-over values are no longer what it shows.
  const edited = () => { linkNotes = []; schedule(); };
  form.addEventListener('input', edited);
  form.addEventListener('change', edited);
  form.addEventListener('submit', (e) => e.preventDefault());
  window.addEventListener('hashchange', () => { loadState(hashToState(location.hash)); schedule(); });
  $('folder-input').addEventListener('change', (e) => loadFolder([...e.target.files]));
  const drop = $('drop');
  drop.addEventListener('click', () => $('folder-input').click());
  drop.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); $('folder-input').click(); } });
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', async (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    const lists = await Promise.all([...e.dataTransfer.items].map(entriesOf));
    loadFolder(lists.flat());
  });
  const copy = async (text, what) => {
    try {
      await navigator.clipboard.writeText(text);
      $('copy-status').textContent = `${what} copied.`;
    } catch {
      $('copy-status').textContent = `Select and copy the ${what.toLowerCase()} above.`;
    }
  };
  $('copy-link').addEventListener('click', () => copy($('share-link').value, 'Link'));
  $('copy-command').addEventListener('click', () => copy($('command').textContent, 'Command'));
  update();
  document.body.dataset.ready = 'true';
}

window.trainmemPage = { call: (r) => call(r), commandFor: () => commandFor(readState()),
  layoutRequest: () => layoutRequest(readState()), update, fmtBytes };
start().catch((e) => showError(`the engine failed to start: ${e}`));
