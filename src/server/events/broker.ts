/**
 * The event broker: every committed write's events, kept for late
 * subscribers in a buffer of the last EVENT_BUFFER_SIZE writes, and handed
 * to each subscriber whose topics match (Nomad's EventBroker).
 *
 *   write commits ──> eventsOfWrite ──> buffer (oldest dropped) ──> each subscriber's filter ──> its callback
 *   subscribe(index) ──> buffered batches from `index` on (all kept when 0) ──> then live
 */
import type { StreamEvent, Topic } from "./events.ts";

/** Nomad's default event_buffer_size: writes kept for subscribers that ask for an earlier index. */
export const EVENT_BUFFER_SIZE = 100;

export interface EventBatch {
  Index: number;
  Events: StreamEvent[];
}

/**
 * What a subscriber wants: per topic ("*" for any), the keys it wants
 * ("*" for all, else an ID, or a job ID matching the FilterKeys of an
 * allocation or evaluation); and a namespace ("*" for all).
 */
export interface Subscription {
  topics: ReadonlyMap<string, readonly string[]>;
  namespace: string;
  /** With "*": the namespaces whose events the subscriber may see (its ACL); every one when absent. */
  visible?: (namespace: string) => boolean;
}

const matchesKey = (event: StreamEvent, key: string) => key === "*" || event.Key === key || (event.FilterKeys ?? []).includes(key);

/** Nomad's filter: the namespace, then the keys of "*" plus the event's topic. */
export function matches(subscription: Subscription, event: StreamEvent): boolean {
  if (subscription.namespace !== "*" && event.Namespace !== "" && event.Namespace !== subscription.namespace) return false;
  if (event.Namespace !== "" && subscription.visible && !subscription.visible(event.Namespace)) return false;
  const keys = [...(subscription.topics.get("*") ?? []), ...(subscription.topics.get(event.Topic as Topic) ?? [])];
  return keys.some((key) => matchesKey(event, key));
}

export class EventBroker {
  private readonly buffer: EventBatch[] = [];
  private readonly subscribers = new Set<(batch: EventBatch) => void>();

  publish(batch: EventBatch): void {
    if (batch.Events.length === 0) return;
    this.buffer.push(batch);
    if (this.buffer.length > EVENT_BUFFER_SIZE) this.buffer.shift();
    for (const subscriber of this.subscribers) subscriber(batch);
  }

  /**
   * Calls `deliver` with the matching events of each batch from `index` on
   * (every buffered batch when 0), then of each new one, until the returned
   * function is called. A batch with no match is not delivered.
   */
  subscribe(subscription: Subscription, index: number, deliver: (batch: EventBatch) => void): () => void {
    const send = (batch: EventBatch) => {
      const events = batch.Events.filter((event) => matches(subscription, event));
      if (events.length > 0) deliver({ Index: batch.Index, Events: events });
    };
    for (const batch of this.buffer) if (batch.Index >= index) send(batch);
    this.subscribers.add(send);
    return () => this.subscribers.delete(send);
  }
}
