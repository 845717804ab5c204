/**
 * Signal names and numbers (Linux). Job files and API calls name signals
 * ("SIGTERM", "TERM", "15"); processes report numbers.
 */
import { constants } from "node:os";

const SIGNALS = constants.signals as Readonly<Record<string, number>>;

/** The number of a signal given as "SIGTERM", "TERM", "sigterm" or "15"; throws on anything else. */
export function signalNumber(signal: string | number): number {
  if (typeof signal === "number") {
    if (Number.isInteger(signal) && signal > 0 && signal < 65) return signal;
    throw new Error(`unknown signal ${signal}`);
  }
  const trimmed = signal.trim();
  if (/^\d+$/.test(trimmed)) return signalNumber(Number(trimmed));
  const upper = trimmed.toUpperCase();
  const name = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  const number = SIGNALS[name];
  if (number === undefined) throw new Error(`unknown signal "${signal}"`);
  return number;
}

/** "SIGTERM" for 15; "signal 42" for a number with no name. */
export function signalName(signal: number): string {
  for (const [name, number] of Object.entries(SIGNALS)) if (number === signal) return name;
  return `signal ${signal}`;
}

/** True when `signal` names a signal this platform knows. */
export function isSignal(signal: string): boolean {
  try {
    signalNumber(signal);
    return true;
  } catch {
    return false;
  }
}
