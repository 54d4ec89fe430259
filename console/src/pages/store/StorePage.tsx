import { type FormEvent, useState } from "react";
import type { ScoredItem } from "../../../../src/store/schemas.ts";
import { api, langGraphClient } from "../../api.ts";
import { Empty, ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { JsonTree } from "../../components/JsonTree.tsx";
import { PageHeader } from "../../components/Layout.tsx";
import { formatTime } from "../../format.ts";
import { useLoad } from "../../hooks.ts";
import { parseJsonObject } from "../../json-input.ts";

const PAGE_SIZE = 20;
const NAMESPACE_LIMIT = 1000;

/** Namespace labels may not contain a period (LangGraph's rule), so a period joins them for display and input. */
const joinNamespace = (namespace: string[]) => namespace.join(".");
const splitNamespace = (text: string) =>
  text
    .split(".")
    .map((part) => part.trim())
    .filter(Boolean);

interface TreeNode {
  label: string;
  path: string[];
  children: TreeNode[];
}

/** The namespaces as a tree of their labels: ["a","b"] and ["a","c"] share "a". */
function namespaceTree(namespaces: string[][]): TreeNode[] {
  const root: TreeNode = { label: "", path: [], children: [] };
  for (const namespace of namespaces) {
    let node = root;
    for (const label of namespace) {
      let child = node.children.find((c) => c.label === label);
      if (!child) {
        child = { label, path: [...node.path, label], children: [] };
        node.children.push(child);
      }
      node = child;
    }
  }
  const sort = (nodes: TreeNode[]) => {
    nodes.sort((a, b) => a.label.localeCompare(b.label));
    for (const node of nodes) sort(node.children);
  };
  sort(root.children);
  return root.children;
}

/**
 * Which search the API ran, as far as its answer tells: it never says whether the store has a semantic
 * index, but only a ranked search gives items a `score`. An index-less store, or items without vectors
 * (`index: false`, nothing at the index's paths), answer no score.
 */
function searchKind(query: string, items: ScoredItem[]): "meaning" | "text" | undefined {
  if (!query) return undefined;
  return items.some((item) => item.score !== undefined) ? "meaning" : "text";
}

/** A score as the page shows it: three decimals (cosine similarity, so within [-1, 1]). */
const formatScore = (score: number) => score.toFixed(3);

/** The store: namespaces as a tree, the items under the chosen one (paged, searchable by a query), put and delete. */
export function StorePage() {
  const [prefix, setPrefix] = useState<string[]>([]);
  const [offset, setOffset] = useState(0);
  // The query the items were searched by (applied on submit), and the text in its box.
  const [query, setQuery] = useState("");
  const [queryInput, setQueryInput] = useState("");
  const [error, setError] = useState<unknown>();
  const namespaces = useLoad(
    (signal) => langGraphClient().store.listNamespaces({ limit: NAMESPACE_LIMIT, signal }),
    [],
  );
  // The API's own answer (not the SDK's), so each item keeps its `score`, in the order the API ranked them.
  const items = useLoad(
    (signal) =>
      api<{ items: ScoredItem[] }>("/store/items/search", {
        body: { namespace_prefix: prefix, limit: PAGE_SIZE + 1, offset, ...(query ? { query } : {}) },
        signal,
      }),
    [joinNamespace(prefix), offset, query],
  );
  const page = items.data?.items.slice(0, PAGE_SIZE) ?? [];
  const hasMore = (items.data?.items.length ?? 0) > PAGE_SIZE;
  const kind = items.data ? searchKind(query, items.data.items) : undefined;

  function choose(path: string[]) {
    setPrefix(path);
    setOffset(0);
  }
  function search(event: FormEvent) {
    event.preventDefault();
    setQuery(queryInput.trim());
    setOffset(0);
  }
  function clearQuery() {
    setQueryInput("");
    setQuery("");
    setOffset(0);
  }
  function changed() {
    namespaces.reload();
    items.reload();
  }
  async function remove(item: ScoredItem) {
    setError(undefined);
    try {
      await langGraphClient().store.deleteItem(item.namespace, item.key);
      changed();
    } catch (reason) {
      setError(reason);
    }
  }

  return (
    <>
      <PageHeader title="Store" />
      <div className="store-layout">
        <nav className="card store-namespaces" aria-label="Namespaces">
          <h3>Namespaces</h3>
          <ErrorBox error={namespaces.error} />
          {namespaces.loading && !namespaces.data ? <Loading /> : null}
          <button type="button" className={`link ${prefix.length === 0 ? "active" : ""}`} onClick={() => choose([])}>
            (all)
          </button>
          {namespaces.data && namespaces.data.namespaces.length === 0 ? <Empty>No namespaces.</Empty> : null}
          {namespaces.data ? (
            <NamespaceList nodes={namespaceTree(namespaces.data.namespaces)} selected={prefix} onSelect={choose} />
          ) : null}
        </nav>
        <section className="store-items" aria-label="Items">
          <PutItemForm prefix={prefix} onPut={changed} />
          <h2>
            Items under <span className="mono">{prefix.length ? joinNamespace(prefix) : "(all)"}</span>
          </h2>
          <form className="row store-search" aria-label="Search items" onSubmit={search}>
            <label>
              Query
              <input
                type="search"
                value={queryInput}
                onChange={(e) => setQueryInput(e.target.value)}
                placeholder="e.g. what does the user like to eat"
                aria-describedby="store-search-help"
              />
            </label>
            <button type="submit">Search</button>
            {query ? (
              <button type="button" className="secondary" onClick={clearQuery}>
                Clear
              </button>
            ) : null}
            <p id="store-search-help" className="muted small">
              With a semantic index (langgraph.json <span className="mono">store.index</span>), the query ranks the
              items by meaning, each with a score; without one it is a case-insensitive text match on the values, with
              no scores. Items stored without vectors (<span className="mono">index: false</span>, or nothing at the
              index's paths) have no score and come last.
            </p>
          </form>
          {kind ? (
            <p className="muted" role="status" aria-label="Search kind">
              {kind === "meaning"
                ? `Ranked by meaning: items in order of similarity to “${query}”.`
                : `Text match: items whose value contains “${query}” (no item has a score).`}
            </p>
          ) : null}
          <ErrorBox error={items.error ?? error} />
          {items.loading && !items.data ? <Loading /> : null}
          {items.data && page.length === 0 ? <Empty>No items.</Empty> : null}
          {page.map((item) => (
            <article
              key={`${joinNamespace(item.namespace)}/${item.key}`}
              className="card store-item"
              aria-label={`Item ${joinNamespace(item.namespace)} ${item.key}`}
            >
              <div className="row store-item-head">
                <strong className="mono">{item.key}</strong>
                <span className="muted mono">{joinNamespace(item.namespace)}</span>
                {item.score !== undefined ? (
                  <span className="badge badge-neutral mono" title="Similarity to the query (cosine)">
                    score <span data-score>{formatScore(item.score)}</span>
                  </span>
                ) : null}
                <span className="muted">updated {formatTime(item.updated_at)}</span>
                <button
                  type="button"
                  className="danger"
                  aria-label={`Delete item ${item.key}`}
                  onClick={() => remove(item)}
                >
                  Delete
                </button>
              </div>
              <JsonTree value={item.value} />
            </article>
          ))}
          <div className="pager">
            <button
              type="button"
              className="secondary"
              disabled={offset === 0}
              onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}
            >
              Previous
            </button>
            <span className="muted">{page.length ? `${offset + 1}–${offset + page.length}` : "—"}</span>
            <button
              type="button"
              className="secondary"
              disabled={!hasMore}
              onClick={() => setOffset(offset + PAGE_SIZE)}
            >
              Next
            </button>
          </div>
        </section>
      </div>
    </>
  );
}

function NamespaceList({
  nodes,
  selected,
  onSelect,
}: {
  nodes: TreeNode[];
  selected: string[];
  onSelect: (path: string[]) => void;
}) {
  return (
    <ul className="namespace-tree">
      {nodes.map((node) => {
        const current = joinNamespace(node.path) === joinNamespace(selected);
        return (
          <li key={node.label}>
            <button
              type="button"
              className={`link ${current ? "active" : ""}`}
              aria-current={current ? "true" : undefined}
              onClick={() => onSelect(node.path)}
            >
              {node.label}
            </button>
            {node.children.length ? (
              <NamespaceList nodes={node.children} selected={selected} onSelect={onSelect} />
            ) : null}
          </li>
        );
      })}
    </ul>
  );
}

function PutItemForm({ prefix, onPut }: { prefix: string[]; onPut: () => void }) {
  const [namespace, setNamespace] = useState("");
  const [key, setKey] = useState("");
  const [value, setValue] = useState("{}");
  const [noIndex, setNoIndex] = useState(false);
  const [indexPaths, setIndexPaths] = useState("");
  const [ttl, setTtl] = useState("");
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(undefined);
    const parsed = parseJsonObject(value, "Value");
    if ("error" in parsed) {
      setError(new Error(parsed.error));
      return;
    }
    setBusy(true);
    try {
      const target = namespace.trim() ? splitNamespace(namespace) : prefix;
      // Paths one a line: a path may hold a comma (`{a,b}`). None given: the store's own fields.
      const paths = indexPaths
        .split("\n")
        .map((path) => path.trim())
        .filter(Boolean);
      const index = noIndex ? false : paths.length ? paths : undefined;
      // The API checks the TTL (a positive whole number of minutes) and says what is wrong with it.
      await langGraphClient().store.putItem(target, key, parsed.value, {
        index,
        ttl: ttl.trim() ? Number(ttl) : undefined,
      });
      setKey("");
      onPut();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card" aria-label="Put item" onSubmit={submit}>
      <h3>Put an item</h3>
      <div className="form-grid">
        <label>
          Namespace (labels joined by “.”)
          <input
            className="mono"
            value={namespace}
            onChange={(e) => setNamespace(e.target.value)}
            placeholder={prefix.length ? joinNamespace(prefix) : "users.alice"}
          />
        </label>
        <label>
          Key
          <input className="mono" required value={key} onChange={(e) => setKey(e.target.value)} />
        </label>
      </div>
      <label>
        Value (JSON object)
        <textarea value={value} onChange={(e) => setValue(e.target.value)} rows={3} />
      </label>
      <div className="form-grid">
        <label>
          Index paths (one a line; empty: the store's fields)
          <textarea
            className="mono"
            value={indexPaths}
            disabled={noIndex}
            onChange={(e) => setIndexPaths(e.target.value)}
            rows={2}
            placeholder={"text\nnotes[*].body"}
          />
        </label>
        <label>
          TTL (minutes)
          <input type="number" min={1} step={1} value={ttl} onChange={(e) => setTtl(e.target.value)} />
        </label>
      </div>
      <label className="checkbox">
        <input type="checkbox" checked={noIndex} onChange={(e) => setNoIndex(e.target.checked)} />
        Don't embed this item (index: false)
      </label>
      <p className="muted small">
        Index paths and “don't embed” matter only when langgraph.json declares <span className="mono">store.index</span>
        . An item without a TTL takes <span className="mono">store.ttl.default_ttl</span>, if any, else never expires.
      </p>
      <ErrorBox error={error} />
      <div className="row">
        <button type="submit" disabled={busy}>
          Put item
        </button>
      </div>
    </form>
  );
}
