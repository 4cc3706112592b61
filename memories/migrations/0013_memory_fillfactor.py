from django.db import migrations

# Reads and searches set `accessed_at` on what they return (memories.bookkeeping): tens of row updates a second under
# load. An update can stay on its page without touching any index (a HOT update) only when the page has room; with
# full pages (fillfactor 100) about a quarter of them were not, and each of those put a new entry into every index
# of the table, the HNSW graph included (pg_stat_user_tables after 20 minutes of bench/load.py: 131k of 559k updates
# not HOT). 20% of each new page is left free for them. Existing pages gain room as vacuum frees it.


class Migration(migrations.Migration):
    dependencies = [("memories", "0012_memory_stamps")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE memories_memory SET (fillfactor = 80)",
            reverse_sql="ALTER TABLE memories_memory RESET (fillfactor)",
        ),
    ]
