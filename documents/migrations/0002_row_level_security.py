from django.db import migrations

from memento.rls import rls_drop_sql, rls_policy_sql

TABLES = ["documents_document", "documents_chunk"]


class Migration(migrations.Migration):
    dependencies = [("documents", "0001_initial")]

    operations = [
        migrations.RunSQL(rls_policy_sql(table), reverse_sql=rls_drop_sql(table)) for table in TABLES
    ]
