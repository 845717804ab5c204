import { useEffect, useState } from "preact/hooks";

const QUERY = "(prefers-color-scheme: dark)";

/** "dark" or "light", following the system's setting as it changes. */
export function useColorScheme(): "dark" | "light" {
  const [dark, setDark] = useState(() => matchMedia(QUERY).matches);
  useEffect(() => {
    const media = matchMedia(QUERY);
    const update = () => setDark(media.matches);
    media.addEventListener("change", update);
    return () => media.removeEventListener("change", update);
  }, []);
  return dark ? "dark" : "light";
}
