from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from lightmysky import views

urlpatterns = [
    path("robots.txt", views.robots_txt, name="robots_txt"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("", include("lessons.urls")),
    path("", include("practice.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
