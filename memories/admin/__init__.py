"""Admin for projects, memories and read events. Every memory write made here goes through `memories.services`,
so it is versioned like any API write (actor = the staff user, reason "... in admin"). Staff pages under /admin/
bypass row-level security (core.rls), so the admin sees every owner's rows.

projects.py: projects; memory.py: memories (lists.py: their list filters, forms.py: their form); events.py: read
events. Importing them registers them."""

from memories.admin import events, memory, projects  # noqa: F401
