import type { SnapshotConfig, SnapshotSection } from './snapshot';

/** A row of any snapshot section: what a delta carries and a config state keeps. */
export type ConfigRow = Record<string, unknown> & { id: string };

/** The row type of each snapshot section but credentials: the element type of the snapshot's list. */
export type SectionRows = { [S in Exclude<SnapshotSection, 'credentials'>]-?: NonNullable<SnapshotConfig[S]>[number] };

/** A credential row, under `credentials/<entity>`. */
export type CredentialRow = SnapshotConfig['credentials'][string][number];
export type CredentialSectionKey = `credentials/${string}`;

/** The section keys a configuration has: the snapshot's sections and one per credential entity. */
export type KnownSectionKey = keyof SectionRows | CredentialSectionKey;

/** The type of a row under a section key; a key known only at run time gives any row. */
export type RowOf<K extends string> = K extends keyof SectionRows ? SectionRows[K] : K extends CredentialSectionKey ? CredentialRow : ConfigRow;

/** One row that a delta changed, with what it was before (absent: new) and after (absent: deleted), typed by its key. */
export type AppliedChange<K extends KnownSectionKey = KnownSectionKey> = K extends unknown ? { key: K; id: string; before?: RowOf<K>; after?: RowOf<K> } : never;
