from django.db import migrations

from memento.rls import rls_drop_sql, rls_policy_sql

TABLES = ["memories_project", "memories_memory", "memories_memoryhistory", "memories_memoryevent"]


class Migration(migrations.Migration):
    dependencies = [("memories", "0001_initial")]

    operations = [
        migrations.RunSQL(rls_policy_sql(table), reverse_sql=rls_drop_sql(table)) for table in TABLES
    ]
