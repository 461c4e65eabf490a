// Hides the passwords in PostgreSQL URLs (one or a comma-separated list) for logs and messages.

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`; also `?password=…`. */
export function maskUrl(location: string): string {
  return location.replace(/(\/\/[^/@:,]*:)[^/@,]*@/g, '$1***@').replace(/([?&]password=)[^&,]*/gi, '$1***');
}
