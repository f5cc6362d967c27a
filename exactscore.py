import sys; sys.path.insert(0,'/tmp/svt12')
from harness2 import *
from dpaudit.audit.scores import UserScore
name=sys.argv[1]; n=int(sys.argv[2]); frac=float(sys.argv[3]) if len(sys.argv)>3 else 0.1
row,tr=truth2(name)
_,c,p0,p1=tr
lr=np.log(p0/p1)
def f(x):
    x=np.asarray(x).reshape(len(x),-1)
    k=np.where((x==1).any(1), (x==1).argmax(1), 10)
    return lr[k]
us=UserScore(f)
vals=[]
for s in range(n):
    o,p,s0,s1,fam=fams(name,s,frac)
    plans=S.choose_events([(us,us(s0),us(s1))],p.n_est,o.claim_delta,p.level_eps,o.grid_size)
    v,info=value(plans,tr,p.n_est,p.level_eps); vals.append(v); print(s, round(v,4), info)
print("mean %.4f sd %.4f min %.4f"%(np.mean(vals),np.std(vals),np.min(vals)))
