/**
 * The jobs list's namespace switch, as in Nomad's UI: the namespaces the
 * token may see (the agent filters /v1/namespaces by token) and "All". The
 * choice lives in the URL, so links, the back button and a reload keep it.
 */
import { useEffect } from "preact/hooks";
import { NamespaceListSchema } from "../api/shapes.ts";
import { useWatch } from "../hooks/use-watch.ts";
import { ALL_NAMESPACES, DEFAULT_NAMESPACE, navigate, paths } from "../router.ts";

export function NamespaceSelect({ current }: { current: string }) {
  const { data: namespaces } = useWatch("/v1/namespaces", NamespaceListSchema);
  const names = namespaces?.map((namespace) => namespace.Name);
  const hidden = !names || names.length === 0 || (names.length === 1 && names[0] === current);
  // A namespace the token may not see (a token for team-a only, on the default URL) gives way to the first one it may.
  useEffect(() => {
    if (names && names.length > 0 && current !== ALL_NAMESPACES && !names.includes(current)) navigate(paths.jobs(names.includes(DEFAULT_NAMESPACE) ? DEFAULT_NAMESPACE : names[0]), true);
  }, [names?.join(), current]);
  if (hidden) return null;
  return (
    <label class="namespace-select">
      <span>Namespace</span>
      <select value={current} onChange={(event) => navigate(paths.jobs(event.currentTarget.value))}>
        <option value={ALL_NAMESPACES}>All namespaces</option>
        {names.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </label>
  );
}
