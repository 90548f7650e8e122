
(function(){
var status='all';
var buttons=document.querySelectorAll('nav button');
var box=document.getElementById('task');
var arts=document.querySelectorAll('article');
var count=document.getElementById('count');
function apply(){
var q=box.value.trim().toLowerCase();var shown=0;
for(var i=0;i<arts.length;i++){var a=arts[i];
var ok=(status==='all'||a.dataset.status===status)&&(!q||a.dataset.task.toLowerCase().indexOf(q)>=0);
a.classList.toggle('hidden',!ok);if(ok){shown++;}}
count.textContent=shown+' of '+arts.length+' shown';}
for(var j=0;j<buttons.length;j++){buttons[j].addEventListener('click',function(e){
var b=e.currentTarget;status=b.dataset.filter;
for(var k=0;k<buttons.length;k++){buttons[k].setAttribute('aria-pressed',String(buttons[k]===b));}
apply();});}
box.addEventListener('input',apply);apply();})();
