/**
 * Statements prepared once per database, for the writes made for every task or alloc:
 * a write that builds its Drizzle query and has SQLite parse it each time costs several
 * times the write itself (most of a state write's time while hundreds of tasks start,
 * issue 35).
 */

/** `make` run once per database (an opened state's object) and its result kept with it. */
export function perDatabase<Db extends object, T>(make: (db: Db) => T): (db: Db) => T {
  const made = new WeakMap<Db, T>();
  return (db) => {
    let value = made.get(db);
    if (value === undefined) made.set(db, (value = make(db)));
    return value;
  };
}
