// Requests to the UI's server. Writes carry X-Convoy-UI, which the server
// requires (no other site's page can send it).

// answer is the JSON body of res; a failure throws an Error with the server's
// message, its HTTP status (status) and its body (body).
async function answer(res) {
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const e = new Error(body.error || `${res.status} ${res.statusText}`);
    e.status = res.status;
    e.body = body;
    throw e;
  }
  return body;
}

export async function get(path) {
  return answer(await fetch(path, { headers: { Accept: 'application/json' } }));
}

export async function post(path, body) {
  return answer(await fetch(path, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Convoy-UI': '1' },
    body: body === undefined ? undefined : JSON.stringify(body),
  }));
}

export function releasePath(ns, name, what) {
  return `/api/releases/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/${what}`;
}

export function releaseSetPath(ns, name, what) {
  return `/api/releasesets/${encodeURIComponent(ns)}/${encodeURIComponent(name)}/${what}`;
}
